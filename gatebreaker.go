package litequeue

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The breakers of the gate: how a claim reads them, marks a probe, and how
// the end of a run of a kind with a breaker opens or closes it. The
// options are in breaker.go.

// The states of a breaker's row.
const (
	breakerOpen     = "open"
	breakerHalfOpen = "half_open"
	breakerClosed   = "closed" // open_until: when it closed
)

// breakerRow is a breaker's row, for the rules that read it.
type breakerRow struct{ store.BreakerRow }

// isOpen reports whether r is the row of a breaker that is not closed.
func (r *breakerRow) isOpen() bool {
	return r != nil && r.State != breakerClosed
}

// probing reports whether a probe of the breaker is running.
func (r *breakerRow) probing() bool {
	return r.State == breakerHalfOpen && State(r.ProbeState) == Running
}

// shutFor reports whether the breaker keeps its kind shut at now, and
// until when (zero: until its probe ends). A breaker that does not may let
// one probe through.
func (r *breakerRow) shutFor(now time.Time) (bool, time.Time) {
	switch {
	case r.probing():
		return true, time.Time{}
	case r.State == breakerOpen && r.OpenUntil > store.MS(now):
		return true, store.FromMS(r.OpenUntil)
	}
	return false, time.Time{}
}

// breakerGate shuts the kinds whose breaker is open, and lets one probe
// through a breaker whose cool-down is over. On PostgreSQL, where the
// gate locked such a kind first (see lockKinds), it reads its breaker
// again before it lets a claim take the probe, so that claimers in other
// transactions take no second probe; the file's claims take turns.
func (g *gate) breakerGate(ctx context.Context, tx store.Execer, a *admission, now time.Time, claiming bool) error {
	if !g.st.info.Flow || !slices.ContainsFunc(a.kinds, g.hasBreaker) {
		return nil
	}
	rows := a.breakers
	if !a.locked {
		var err error
		if rows, err = openBreakers(ctx, tx); err != nil {
			return fmt.Errorf("read breakers: %w", err)
		}
	}
	for i := range rows {
		r := &rows[i]
		if !slices.Contains(a.kinds, r.Kind) || !g.hasBreaker(r.Kind) {
			continue
		}
		if shut, opens := r.shutFor(now); shut {
			a.shut(r.Kind, opens)
			continue
		}
		if !claiming {
			continue
		}
		if a.locked {
			again, err := g.breakerRow(ctx, tx, r.Kind)
			if err != nil {
				return err
			}
			if r = again; !r.isOpen() {
				continue // closed meanwhile
			}
			if shut, opens := r.shutFor(now); shut {
				a.shut(r.Kind, opens)
				continue
			}
		}
		a.limit(r.Kind, 1, time.Time{})
		a.probes = append(a.probes, r.Kind)
	}
	return nil
}

// breakerProbes reads, on PostgreSQL before a claim locks any kind, the
// breakers that are not closed into g, for breakerGate, and returns the
// kinds of g whose breaker may let a probe through at now: the gate
// locks them (see lockKinds).
func (g *gate) breakerProbes(ctx context.Context, tx store.Execer, a *admission, now time.Time) ([]string, error) {
	if !slices.ContainsFunc(a.kinds, g.hasBreaker) {
		return nil, nil
	}
	var err error
	if a.breakers, err = openBreakers(ctx, tx); err != nil {
		return nil, fmt.Errorf("read breakers: %w", err)
	}
	var kinds []string
	for _, r := range a.breakers {
		if shut, _ := r.shutFor(now); !shut && slices.Contains(a.kinds, r.Kind) && g.hasBreaker(r.Kind) {
			kinds = append(kinds, r.Kind)
		}
	}
	return kinds, nil
}

// hasBreaker reports whether the handler of kind has a breaker.
func (g *gate) hasBreaker(kind string) bool {
	hd := g.reg.get(kind)
	return hd != nil && hd.breaker != nil
}

// breakerClaimed marks the probe of a half-open breaker: the first run
// the claim took of a kind whose breaker let one through.
func (g *gate) breakerClaimed(ctx context.Context, tx store.Execer, a *admission, leases []*lease, now time.Time) error {
	for _, kind := range a.probes {
		for _, l := range leases {
			if l.job.Kind != kind {
				continue
			}
			if err := store.ProbeBreaker(ctx, tx, kind, l.job.ID); err != nil {
				return fmt.Errorf("mark probe: %w", err)
			}
			g.logger.Info("litequeue: circuit breaker half-open: probe started", "kind", kind, "job", l.job.ID)
			break
		}
	}
	return nil
}

// breakerRan counts the end of a run of a kind with a breaker, and opens
// or closes the breaker; it returns the events of a change. On PostgreSQL
// it locks the kind first (see store.Engine.LockKey), so that the failures of
// two runs ending at once are both counted (each would not see the
// other's), and a probe's end is not undone by another's; the breaker
// opens once even without (breakerOpenSQL).
func (g *gate) breakerRan(ctx context.Context, tx store.Execer, d *decision, now time.Time) ([]Event, error) {
	h := d.history
	b := g.kindBreaker(h.Kind)
	if b == nil && Outcome(h.Outcome) != OutcomeLeaseExpired {
		return nil, nil // a rescuer ends a lost probe of any kind
	}
	r, err := g.breakerRow(ctx, tx, h.Kind)
	if err != nil {
		return nil, err
	}
	if !r.probeOf(h.JobID) && !trips(b, r, h) {
		return nil, nil
	}
	if err := g.st.eng.LockKey(ctx, tx, "kind", h.Kind); err != nil {
		return nil, err
	}
	if r, err = g.breakerRow(ctx, tx, h.Kind); err != nil {
		return nil, err
	}
	switch {
	case trips(b, r, h):
		return g.breakerTrip(ctx, tx, b, r, d, now)
	case !r.probeOf(h.JobID):
		return nil, nil // opened meanwhile, or the end of a run that began before
	}
	events, err := g.breakerProbed(ctx, tx, r, d, now)
	if err != nil {
		return nil, err
	}
	// Idle workers elsewhere keep the kind shut until its probe ends.
	return events, g.st.w.WakeIdle(ctx, tx)
}

// kindBreaker is the breaker of kind's handler on this Queue; nil: none.
func (g *gate) kindBreaker(kind string) *Breaker {
	if hd := g.reg.get(kind); hd != nil {
		return hd.breaker
	}
	return nil
}

// probeOf reports whether r is a half-open breaker whose probe is job.
func (r *breakerRow) probeOf(job int64) bool {
	return r.isOpen() && r.State == breakerHalfOpen && r.Probe == job
}

// trips reports whether the run h ended may open the breaker b, closed as
// its row r says: the run failed.
func trips(b *Breaker, r *breakerRow, h *store.HistoryRow) bool {
	return b != nil && !r.isOpen() && failure(Outcome(h.Outcome))
}

// breakerRow reads the breaker of kind; nil if it has no row (it never
// opened).
func (g *gate) breakerRow(ctx context.Context, tx store.Execer, kind string) (*breakerRow, error) {
	r, err := store.Breaker(ctx, tx, kind)
	if err != nil {
		return nil, fmt.Errorf("read breaker: %w", err)
	}
	if r == nil {
		return nil, nil
	}
	return &breakerRow{*r}, nil
}

// openBreakers reads the breakers that are not closed, in the order of
// their kinds, in which claims lock them (see gate.lockKinds).
func openBreakers(ctx context.Context, tx store.Execer) ([]breakerRow, error) {
	rows, err := store.OpenBreakers(ctx, tx)
	out := make([]breakerRow, len(rows))
	for i := range rows {
		out[i] = breakerRow{rows[i]}
	}
	return out, err
}

// breakerTrip opens the closed breaker b of the run d ended, a failure,
// if the failures in its window since it last closed (r, if it has a row)
// reach its threshold.
func (g *gate) breakerTrip(ctx context.Context, tx store.Execer, b *Breaker, r *breakerRow, d *decision, now time.Time) ([]Event, error) {
	h := d.history
	since := store.MS(now.Add(-b.Window))
	if r != nil {
		since = max(since, r.OpenUntil)
	}
	failed, err := store.FailedSince(ctx, tx, h.Kind, since)
	if err != nil {
		return nil, fmt.Errorf("count failures: %w", err)
	}
	if failed < b.Failures {
		return nil, nil
	}
	// Up to this many completed runs, the failures are at least Ratio;
	// one more is enough to keep the breaker closed.
	most := min(math.Floor(float64(failed)/b.Ratio)-float64(failed), math.MaxInt32)
	completed, err := store.CompletedSince(ctx, tx, h.Kind, since, int64(most)+1)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", err)
	}
	if float64(failed) < b.Ratio*float64(failed+completed) {
		return nil, nil
	}
	until := now.Add(b.Cooldown)
	opened, err := store.OpenBreaker(ctx, tx, h.Kind, store.MS(now), store.MS(until),
		b.Cooldown.Milliseconds(), b.MaxCooldown.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("open breaker: %w", err)
	}
	if !opened {
		return nil, nil // another transaction opened it meanwhile
	}
	return []Event{{Type: eventBreakerOpened, Job: viewOf(&d.after), Err: h.Error, Delay: b.Cooldown, At: now}}, nil
}

// breakerProbed ends the half-open breaker r whose probe's run d ended:
// closed if it completed, open again for twice as long (at most the cap)
// if it failed, else open with its cool-down over.
func (g *gate) breakerProbed(ctx context.Context, tx store.Execer, r *breakerRow, d *decision, now time.Time) ([]Event, error) {
	h := d.history
	switch {
	case Outcome(h.Outcome) == OutcomeCompleted:
		if _, err := store.CloseBreaker(ctx, tx, r.Kind, store.MS(now)); err != nil {
			return nil, fmt.Errorf("close breaker: %w", err)
		}
		return []Event{{Type: eventBreakerClosed, Job: viewOf(&d.after), At: now}}, nil
	case failure(Outcome(h.Outcome)):
		cooldown := min(2*r.Cooldown, r.MaxCooldown)
		if r.Cooldown > math.MaxInt64/2 {
			cooldown = r.MaxCooldown
		}
		if err := store.ReopenBreaker(ctx, tx, r.Kind, store.MS(now)+cooldown, r.Trips+1, cooldown); err != nil {
			return nil, fmt.Errorf("open breaker: %w", err)
		}
		delay := time.Duration(cooldown) * time.Millisecond
		return []Event{{Type: eventBreakerOpened, Job: viewOf(&d.after), Err: h.Error, Delay: delay, At: now}}, nil
	}
	if err := store.ReopenBreaker(ctx, tx, r.Kind, store.MS(now), r.Trips, r.Cooldown); err != nil {
		return nil, fmt.Errorf("reopen breaker: %w", err)
	}
	return nil, nil
}

// emitRan logs the breakers that the events of ran opened, then fires
// the events: after the commit, once.
func (g *gate) emitRan(events []Event) {
	for _, e := range events {
		if e.Type == eventBreakerOpened {
			g.logger.Warn("litequeue: circuit breaker opened", "kind", e.Job.Kind,
				"job", e.Job.ID, "cooldown", e.Delay, "err", e.Err)
		}
	}
	g.events.emit(events...)
}

// breakerStats reads, in tx, the breakers that are not closed, by kind:
// none in a file older than version 5 that OpenReadOnly reads without
// migrating it.
func (g *gate) breakerStats(ctx context.Context, tx store.Execer) (map[string]BreakerStats, error) {
	out := make(map[string]BreakerStats)
	if !g.st.info.Flow {
		return out, nil
	}
	rows, err := openBreakers(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		state := breakerOpen // a half-open breaker whose probe was released waits for another
		if r.probing() {
			state = breakerHalfOpen
		}
		out[r.Kind] = BreakerStats{State: state, OpenedAt: store.FromMS(r.OpenedAt), Until: store.FromMS(r.OpenUntil), Trips: r.Trips}
	}
	return out, nil
}
