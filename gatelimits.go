package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The limits of the gate: MaxRunning and RateLimit, as a claim reads and
// counts them. The options are in limits.go.

// limitGate caps the kinds with a limit on their runs: at most MaxRunning
// less the kind's running jobs, and RateLimit less its starts in the
// window, which it shuts until the oldest of those leaves the window. When
// claiming, the gate has locked each limited kind (see lockKinds), and it
// prunes the starts out of the window.
func (g *gate) limitGate(ctx context.Context, tx store.Execer, a *admission, now time.Time, claiming bool) error {
	var limited, capped []string
	byKind := make(map[string]limits)
	for _, kind := range a.kinds {
		h := g.reg.get(kind)
		if h == nil || !h.limits.limited() {
			continue
		}
		limited, byKind[kind] = append(limited, kind), h.limits
		if h.limits.running > 0 {
			capped = append(capped, kind)
		}
	}
	if len(limited) == 0 {
		return nil
	}
	if err := g.capRunning(ctx, tx, a, capped, byKind); err != nil {
		return err
	}
	for _, kind := range limited {
		if l := byKind[kind]; l.rate > 0 {
			if err := g.capStarts(ctx, tx, a, kind, l, now, claiming); err != nil {
				return err
			}
		}
	}
	return nil
}

// capRunning caps each kind of kinds at its MaxRunning less its running
// jobs; a kind at its limit opens when a run ends, which writes.
func (g *gate) capRunning(ctx context.Context, tx store.Execer, a *admission, kinds []string, byKind map[string]limits) error {
	if len(kinds) == 0 {
		return nil
	}
	running, err := store.Running(ctx, tx, kinds)
	if err != nil {
		return fmt.Errorf("count running jobs: %w", err)
	}
	for _, kind := range kinds {
		a.limit(kind, byKind[kind].running-running[kind], time.Time{})
	}
	return nil
}

// capStarts caps kind at its RateLimit less its starts in the window
// ending at now; if none is left, the kind opens when the n-th latest
// start leaves the window. (Both come from one statement: outside a
// claim, another process's claim may prune the window between two.)
func (g *gate) capStarts(ctx context.Context, tx store.Execer, a *admission, kind string, l limits, now time.Time, claiming bool) error {
	if !g.st.info.Flow {
		return nil
	}
	to, per := store.MS(now), l.per.Milliseconds()
	from := to - per
	if claiming {
		if err := store.PruneStarts(ctx, tx, kind, from, to); err != nil {
			return fmt.Errorf("prune starts of %q: %w", kind, err)
		}
	}
	n, nth, err := store.Starts(ctx, tx, kind, from, to, l.rate)
	if err != nil {
		return fmt.Errorf("count starts of %q: %w", kind, err)
	}
	left := l.rate - n
	var opens time.Time
	if left <= 0 && nth.Valid {
		opens = store.FromMS(nth.Int64 + per)
	}
	a.limit(kind, left, opens)
	return nil
}

// limitClaimed counts the starts of the claimed runs of rate-limited kinds.
func (g *gate) limitClaimed(ctx context.Context, tx store.Execer, leases []*lease, now time.Time) error {
	for _, l := range leases {
		if l.h.limits.rate == 0 {
			continue
		}
		if err := store.AddStart(ctx, tx, l.row.Kind, store.MS(now)); err != nil {
			return fmt.Errorf("count the start of job %d: %w", l.row.ID, err)
		}
	}
	return nil
}

// limitRan wakes the idle workers of other processes at the end of a run
// of a kind with MaxRunning: its jobs may be claimed again.
func (g *gate) limitRan(ctx context.Context, tx store.Execer, d *decision) error {
	if h := g.reg.get(d.history.Kind); h == nil || h.limits.running == 0 {
		return nil
	}
	return g.st.w.WakeIdle(ctx, tx)
}

// limitStats reads, in tx at now, the use of the limits of the handled
// kinds that have any, sorted by kind; never nil. It prunes nothing: the
// starts counted are those in the window that ends at now.
func (g *gate) limitStats(ctx context.Context, tx store.Execer, now time.Time) ([]LimitStats, error) {
	out := []LimitStats{}
	var kinds []string
	for _, kind := range g.reg.kinds() {
		if h := g.reg.get(kind); h != nil && h.limits.limited() {
			l := h.limits
			out = append(out, LimitStats{Kind: kind, MaxRunning: l.running, RateLimit: l.rate, RatePer: l.per})
			kinds = append(kinds, kind)
		}
	}
	if len(kinds) == 0 {
		return out, nil
	}
	running, err := store.Running(ctx, tx, kinds)
	if err != nil {
		return nil, fmt.Errorf("count running jobs: %w", err)
	}
	to := store.MS(now)
	for i := range out {
		s := &out[i]
		s.Running = running[s.Kind]
		if s.RateLimit == 0 || !g.st.info.Flow {
			continue
		}
		if s.Starts, _, err = store.Starts(ctx, tx, s.Kind, to-s.RatePer.Milliseconds(), to, s.RateLimit); err != nil {
			return nil, fmt.Errorf("count starts of %q: %w", s.Kind, err)
		}
	}
	return out, nil
}
