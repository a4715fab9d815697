package litequeue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Circuit breakers: a kind whose runs fail in a burst is paused, not run
// into the dead-letter queue. The state is a row of litequeue_breakers per
// kind, so that every process on the database sees it. A kind whose
// breaker never opened has no row; one that closed keeps its row, in state
// 'closed', with when it closed in open_until: its failures count from
// then on, not from before, so that the failures that opened it do not
// open it again (the readers of what is open skip those rows). The row
// holds what any process needs to end a probe — its cool-down and the cap
// on its doubling — as a claim writes what a rescuer needs (see
// decide.go).

// Breaker configures the circuit breaker of a kind's handler (see
// [WithBreaker]). Zero fields take the defaults given with each.
//
// The breaker is closed at first. It opens at the end of a failed run
// (failed, panicked, timed_out or lease_expired: a [Permanent] failure
// counts) when, in the [Breaker.Window] up to that moment and since it last
// closed, at least [Breaker.Failures] of the kind's runs failed and they
// are at least [Breaker.Ratio] of its runs that count: the failed ones and
// the completed ones. Discarded, cancelled and snoozed runs count neither
// way: they say nothing about a dependency.
//
// While open, nothing more of the kind is claimed; runs already claimed
// finish, including the jobs that [Queue.Work] leased ahead of its free
// slots before the breaker opened, which start after it. The kind's pending
// jobs wait, using no tries, their [Job.RunAt] unchanged. Once
// [Breaker.Cooldown] has passed the breaker is half-open: one job is
// claimed as its probe, and nothing else of the kind until it ends. A probe
// that completes closes the breaker; one that fails opens it again for
// twice the last cool-down, at most [Breaker.MaxCooldown]. A probe that
// ends otherwise (released at a shutdown, cancelled, discarded, snoozed)
// leaves the breaker open with its cool-down over, so that the next claim
// takes another probe.
//
// With the defaults, 20 failed runs in a minute, half of the runs or more,
// open the breaker for 30s, then 1m, 2m, 4m, 8m and 10m after each failed
// probe.
type Breaker struct {
	Failures    int           // failed runs in the [Breaker.Window] that open the breaker; 0: 20
	Ratio       float64       // the least share of the [Breaker.Window]'s runs that failed, in (0, 1]; 0: 0.5
	Window      time.Duration // how far back runs count; 0: 1m
	Cooldown    time.Duration // how long the breaker stays open before its first probe; 0: 30s
	MaxCooldown time.Duration // the cap on the cool-down, doubled after each failed probe; 0: 10m, or [Breaker.Cooldown] if longer
}

// The defaults of a [Breaker]'s zero fields.
const (
	DefaultBreakerFailures    = 20
	DefaultBreakerRatio       = 0.5
	DefaultBreakerWindow      = time.Minute
	DefaultBreakerCooldown    = 30 * time.Second
	DefaultBreakerMaxCooldown = 10 * time.Minute
)

// WithBreaker gives the handler a circuit breaker (see [Breaker]). A
// handler has none unless it is given one: a breaker that trips where none
// was asked for would surprise, holding back jobs whose retries the program
// counts on. [Queue.Handle] panics on a field out of its limits:
// [Breaker.Failures] ≥ 1, [Breaker.Ratio] in (0, 1], [Breaker.Window] > 0,
// [Breaker.Cooldown] > 0, [Breaker.MaxCooldown] ≥ Cooldown (zero fields
// take their defaults first).
//
// The breaker's state is kept in the database and shared by the Queues
// on it whose handler of the kind has a breaker: one opens it, and none
// claims more of the kind while it is open (what each already claimed
// still runs). Give every process the same options:
// a [Queue] whose handler has none claims the kind as if it had no breaker
// (and so pays nothing for the feature), though it still counts a lost
// probe that it rescues.
func WithBreaker(b Breaker) HandlerOption {
	return func(h *handler) { h.breaker = &b }
}

// resolve fills the zero fields of b and checks it: the error names the
// first field out of its limits as litequeue.toml does (see KindOptions).
func (b Breaker) resolve() (Breaker, *FieldError) {
	if b.Failures == 0 {
		b.Failures = DefaultBreakerFailures
	}
	if b.Ratio == 0 {
		b.Ratio = DefaultBreakerRatio
	}
	if b.Window == 0 {
		b.Window = DefaultBreakerWindow
	}
	if b.Cooldown == 0 {
		b.Cooldown = DefaultBreakerCooldown
	}
	if b.MaxCooldown == 0 {
		b.MaxCooldown = max(DefaultBreakerMaxCooldown, b.Cooldown)
	}
	switch {
	case b.Failures < 1:
		return b, &FieldError{Field: "failures", Value: b.Failures, Limit: 1, kind: underMinimum}
	case b.Ratio > 1:
		return b, &FieldError{Field: "ratio", Value: b.Ratio, Limit: 1.0}
	case !(b.Ratio > 0):
		return b, &FieldError{Field: "ratio", Value: b.Ratio, Limit: 0.0, kind: notPositive}
	case b.Window < 0:
		return b, &FieldError{Field: "window", Value: b.Window, Limit: time.Duration(0), kind: notPositive}
	case b.Cooldown < 0:
		return b, &FieldError{Field: "cooldown", Value: b.Cooldown, Limit: time.Duration(0), kind: notPositive}
	case b.MaxCooldown < b.Cooldown:
		return b, &FieldError{Field: "max_cooldown", Value: b.MaxCooldown, Limit: b.Cooldown, kind: underMinimum}
	}
	return b, nil
}

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
// it locks the kind first (see engine.lockKind), so that the failures of
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

// BreakerStats is the state of a kind's circuit breaker that is not
// closed, in [Stats].Breakers.
type BreakerStats struct {
	State    string    // "open" or "half_open" (its probe running)
	OpenedAt time.Time // when it last left closed
	Until    time.Time // the end of its cool-down: open, it lets a probe through from then on
	Trips    int       // times it opened since it was last closed: 1, then one more per failed probe
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

// ResetBreaker closes the circuit breaker of kind by hand, as a probe that
// completed would, so that its jobs are claimed again at once, and wakes
// the idle workers, as [Queue.ResumeKind] does. A breaker that is closed
// stays so. It fires no event. An empty kind is an error; on a [Queue] from
// [OpenReadOnly], ResetBreaker returns [ErrReadOnly].
func (q *Queue) ResetBreaker(ctx context.Context, kind string) error {
	if kind == "" {
		return errors.New("litequeue: reset breaker: the kind's name is empty")
	}
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var closed bool
	err = q.st.write(ctx, func(tx store.Execer) error {
		if err := q.st.eng.LockKey(ctx, tx, "kind", kind); err != nil {
			return err
		}
		if closed, err = store.CloseBreaker(ctx, tx, kind, store.MS(q.now())); err != nil || !closed {
			return err
		}
		return q.st.w.WakeIdle(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("litequeue: reset breaker %q: %w", kind, err)
	}
	if closed {
		q.gate.opened()
	}
	return nil
}
