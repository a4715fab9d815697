package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Per-kind limits: how many runs of a kind may run at once, and start in
// a window of time, counted across every process on the database in the
// claim's transaction (see gate.go). The running runs are the kind's jobs
// in state running; the starts are rows of litequeue_starts, which the
// claims prune as they age out of the window.

// limits are a handler's limits on its kind's runs; zero fields: none.
type limits struct {
	running    int           // MaxRunning's n
	rate       int           // RateLimit's n
	per        time.Duration // RateLimit's window
	runningSet bool          // MaxRunning was given
	rateSet    bool          // RateLimit was given
}

// MaxRunning lets at most n runs of the handler's kind run at once, across
// every process and [Queue] on the database: MaxRunning(1) makes the kind's
// runs take turns, a mutex for the kind. Jobs that [Queue.Work] has leased
// ahead of a free slot count as running, and so does the run of a worker
// that died, until its lease expires and it is rescued. A run counts while
// its job is running: once [Queue.CompleteTx] has committed it, or its
// timeout has recorded it timed out (see [WithTimeout]), the next run may
// start while that handler has not yet returned. Workers with free slots
// take other kinds meanwhile, and an idle one looks again when a run ends.
// Each process declares its own handlers, so every process that handles the
// kind should declare the same limit: a process that declares none, or a
// higher one, starts runs up to its own. [Queue.Handle] panics if n < 1.
func MaxRunning(n int) HandlerOption {
	return func(h *handler) { h.limits.running, h.limits.runningSet = n, true }
}

// RateLimit lets at most n runs of the handler's kind start in any window
// of length per on the injected clock (a sliding window, to the
// millisecond), across every process and [Queue] on the database. A start
// is a run's claim, counted in the claim's transaction: each try of a job
// is one, and a job that [Queue.Work] leased ahead of a free slot counts
// from its claim, so its handler may begin a little later. Once n runs
// started within per, the kind's jobs wait, and idle workers wake when the
// oldest of those starts leaves the window. As with [MaxRunning], every
// process that handles the kind should declare the same limit. A clock set
// back forgets the starts that lie after it. [Queue.Handle] panics if n < 1
// or per < 1ms.
func RateLimit(n int, per time.Duration) HandlerOption {
	return func(h *handler) { h.limits.rate, h.limits.per, h.limits.rateSet = n, per, true }
}

// check returns the first value of l out of its limits, named as
// litequeue.toml names it (see KindOptions); nil if none is.
func (l limits) check() *FieldError {
	switch {
	case l.runningSet && l.running < 1:
		return &FieldError{Field: "max_running", Value: l.running, Limit: 1, kind: underMinimum}
	case l.rateSet && l.rate < 1:
		return &FieldError{Field: "rate_limit", Value: l.rate, Limit: 1, kind: underMinimum}
	case l.rateSet && l.per < time.Millisecond:
		return &FieldError{Field: "rate_per", Value: l.per, Limit: time.Millisecond, kind: underMinimum}
	}
	return nil
}

// optionError says what check found, e, in the words of the HandlerOption
// that set it, for Handle.
func (l limits) optionError(e *FieldError) string {
	switch e.Field {
	case "max_running":
		return fmt.Sprintf("MaxRunning(%d): n must be at least %v", l.running, e.Limit)
	case "rate_limit":
		return fmt.Sprintf("RateLimit(%d, %v): n must be at least %v", l.rate, l.per, e.Limit)
	}
	return fmt.Sprintf("RateLimit(%d, %v): per must be at least %v", l.rate, l.per, e.Limit)
}

// limited reports whether l limits anything.
func (l limits) limited() bool { return l.running > 0 || l.rate > 0 }

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
