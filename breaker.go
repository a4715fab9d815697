package litequeue

import (
	"fmt"
	"time"
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

// BreakerStats is the state of a kind's circuit breaker that is not
// closed, in [Stats].Breakers.
type BreakerStats struct {
	State    string    // "open" or "half_open" (its probe running); "closed" only from [Queue.Breakers]
	OpenedAt time.Time // when it last left closed
	Until    time.Time // the end of its cool-down: open, it lets a probe through from then on
	Trips    int       // times it opened since it was last closed: 1, then one more per failed probe

	// Failures, Threshold and Window are set by [Queue.Breakers] only.
	// Failures counts the kind's failed runs: of a closed breaker, those
	// in the Window up to the read since it last closed, which open it
	// once they reach Threshold (and [Breaker.Ratio]); of one that is not
	// closed, those from a Window before it opened on: the failures that
	// opened it, and its failed probes since. Threshold and Window are
	// [Breaker.Failures] and [Breaker.Window] of the breaker that the
	// Queue's handler of the kind has, else of the one a worker recorded
	// (see [Queue.RecordedPolicies]); where neither is known, Threshold
	// is 0 and Window the default, 1m.
	Failures  int
	Threshold int
	Window    time.Duration
}

// String says b in a few words, its zero fields as they are: "breaker at
// 20 failures in 1m (50% of runs), open 30s to 10m".
func (b Breaker) String() string {
	return fmt.Sprintf("breaker at %d failures in %s (%.0f%% of runs), open %s to %s", b.Failures,
		FormatDuration(b.Window), 100*b.Ratio, FormatDuration(b.Cooldown), FormatDuration(b.MaxCooldown))
}
