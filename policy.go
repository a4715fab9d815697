package litequeue

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Backoff names how the wait before a retry grows with the attempt number.
// The empty Backoff means unset: [Exponential] in the default policy,
// inherited from [Options.Retry] in a named one.
type Backoff string

// The backoff kinds. For attempt n (the run that just failed, from 1):
const (
	Exponential Backoff = "exponential" // min(Ceiling, Base·2^(n−1))
	Linear      Backoff = "linear"      // min(Ceiling, Base·n)
	Constant    Backoff = "constant"    // min(Ceiling, Base)
)

// Limits on a [Policy], checked by [Policy.Validate].
const (
	// MaxTriesLimit is the largest [Policy.MaxTries] a policy, or
	// [MaxTries] a job, may have.
	MaxTriesLimit = 50
	// CeilingLimit is the largest [Policy.Ceiling], and the clamp applied to
	// the durations given to [RetryAfter] and [Snooze].
	CeilingLimit = 24 * time.Hour
)

// Policy says how often a failed job is tried again and how long it waits
// in between. The zero Policy is not valid on its own: [Options.Retry]
// fills its zero fields from [DefaultPolicy], and a named policy in
// [Options.Policies] fills its zero fields from the resolved Options.Retry.
//
// With the defaults (exponential, [Policy.Base] 2s, [Policy.Ceiling] 15m,
// [Policy.MaxTries] 8, full jitter) the retries after attempts 1…7 wait at
// most 2s, 4s, 8s, 16s, 32s, 64s and 128s: 254s in all before the job is
// dead.
type Policy struct {
	Backoff  Backoff       // "": [Exponential]
	Base     time.Duration // the wait before the first retry; 0: 2s
	Ceiling  time.Duration // no wait ever exceeds it, jitter included; 0: 15m
	MaxTries int           // total attempts, the first included, 1…50; 0: 8
	Jitter   Jitter        // "": [FullJitter]
}

// DefaultPolicy returns the policy used where nothing else is said:
// exponential from 2s, capped at 15m, 8 tries, full jitter.
func DefaultPolicy() Policy {
	return Policy{
		Backoff:  Exponential,
		Base:     2 * time.Second,
		Ceiling:  15 * time.Minute,
		MaxTries: 8,
		Jitter:   FullJitter,
	}
}

// withDefaults returns p with each zero field taken from def.
func (p Policy) withDefaults(def Policy) Policy {
	if p.Backoff == "" {
		p.Backoff = def.Backoff
	}
	if p.Base == 0 {
		p.Base = def.Base
	}
	if p.Ceiling == 0 {
		p.Ceiling = def.Ceiling
	}
	if p.MaxTries == 0 {
		p.MaxTries = def.MaxTries
	}
	if p.Jitter == "" {
		p.Jitter = def.Jitter
	}
	return p
}

// Validate checks the policy as given, without filling zero fields:
// [Policy.MaxTries] in 1…50, 0 < [Policy.Base] ≤ [Policy.Ceiling] ≤ 24h,
// and a known (or empty) [Backoff] and [Jitter]. The error is a
// *[FieldError] that names the field, the value and the limit, as in
// "max_tries 80 is over the limit of 50".
func (p Policy) Validate() error {
	if err := p.check(); err != nil {
		return err
	}
	return nil
}

// check is Validate, with a result of the concrete type.
func (p Policy) check() *FieldError {
	switch {
	case p.MaxTries < 1:
		return &FieldError{Field: "max_tries", Value: p.MaxTries, Limit: 1, kind: underMinimum}
	case p.MaxTries > MaxTriesLimit:
		return &FieldError{Field: "max_tries", Value: p.MaxTries, Limit: MaxTriesLimit}
	case p.Base <= 0:
		return &FieldError{Field: "base", Value: p.Base, Limit: time.Duration(0), kind: notPositive}
	case p.Ceiling <= 0:
		return &FieldError{Field: "ceiling", Value: p.Ceiling, Limit: time.Duration(0), kind: notPositive}
	case p.Ceiling > CeilingLimit:
		return &FieldError{Field: "ceiling", Value: p.Ceiling, Limit: CeilingLimit}
	case p.Base > p.Ceiling:
		return &FieldError{Field: "base", Value: p.Base, Limit: p.Ceiling, kind: overCeiling}
	}
	switch p.Backoff {
	case "", Exponential, Linear, Constant:
	default:
		return &FieldError{Field: "policy", Value: p.Backoff, Limit: []string{"exponential", "linear", "constant"}, kind: unknownName}
	}
	switch p.Jitter {
	case "", FullJitter, EqualJitter, NoJitter:
	default:
		return &FieldError{Field: "jitter", Value: p.Jitter, Limit: []string{"full", "equal", "none"}, kind: unknownName}
	}
	return nil
}

// FieldError reports a field of a [Policy] or of [Options] whose value is
// out of its limits. [Policy.Validate] returns it; [Open] and [LoadConfig]
// return it wrapped, with the policy or the line of the file it is about.
// Read it with errors.As.
type FieldError struct {
	// Policy is the name, in [Options.Policies], of the policy whose field
	// it is; "" for [Options.Retry], for a policy checked alone with
	// [Policy.Validate], and for the fields of [Options].
	Policy string

	// Field is the field as litequeue.toml names it: "policy"
	// ([Policy.Backoff]), "base", "ceiling", "max_tries" or "jitter" of a
	// [Policy]; "visibility_timeout", "dead_ttl", "keep_finished",
	// "synchronous", "checkpoint", "max_payload" or "max_clock_skew" of
	// [Options]; "kind", "queue" or "name" (of a periodic schedule) for a
	// name that is not one (see [NameLimit]).
	Field string

	// Value is the value refused, of the field's type.
	Value any

	// Limit is the limit [FieldError.Value] is outside of, of the field's
	// type: the largest or the least value allowed (0 where the value must be
	// positive, or not negative), the policy's [Policy.Ceiling] for a
	// [Policy.Base] over it, or, for a name that is not known, the names
	// allowed, as a []string; for a field given without the one that goes
	// with it ([KindOptions.RateLimit] and [KindOptions.RatePer]), the
	// name of that one, as a string; for a name, [NameLimit].
	Limit any

	kind limitKind // how Value is outside Limit
}

// goNamed returns e with its Field named as the Go field is, for an error
// of the Go API: max_cooldown is MaxCooldown.
func (e *FieldError) goNamed() *FieldError {
	g := *e
	var b strings.Builder
	for w := range strings.SplitSeq(e.Field, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	g.Field = b.String()
	return &g
}

// limitKind says how the Value of a FieldError is outside its Limit.
type limitKind int

const (
	overLimit    limitKind = iota // over Limit, the largest allowed
	underMinimum                  // under Limit, the least allowed
	notPositive                   // not over Limit, 0
	isNegative                    // under Limit, 0
	overCeiling                   // over Limit, the policy's Ceiling
	unknownName                   // not among the names in Limit
	unpaired                      // set without the field named in Limit, which goes with it
	notAName                      // a string that is not a name of at most Limit bytes (see NameLimit)
)

// Error says what is wrong in the words of litequeue.toml, as in
// "max_tries 80 is over the limit of 50"; it does not name the policy.
func (e *FieldError) Error() string {
	switch e.kind {
	case underMinimum:
		return fmt.Sprintf("%s %v is under the minimum of %v", e.Field, e.Value, e.Limit)
	case notPositive:
		return fmt.Sprintf("%s %v must be positive", e.Field, e.Value)
	case isNegative:
		return fmt.Sprintf("%s %v must not be negative", e.Field, e.Value)
	case overCeiling:
		return fmt.Sprintf("%s %v is over the ceiling of %v", e.Field, e.Value, e.Limit)
	case unknownName:
		names, _ := e.Limit.([]string)
		return fmt.Sprintf("%s %q is unknown (want %s)", e.Field, e.Value, orList(names))
	case notAName:
		return e.nameError()
	case unpaired:
		return fmt.Sprintf("%s %v is given without %v: give both or neither", e.Field, e.Value, e.Limit)
	}
	return fmt.Sprintf("%s %v is over the limit of %v", e.Field, e.Value, e.Limit)
}

// fields returns the fields e is about: Field, and for a Base over the
// Ceiling, "ceiling" as well.
func (e *FieldError) fields() []string {
	if e.kind == overCeiling {
		return []string{e.Field, "ceiling"}
	}
	return []string{e.Field}
}

// orList joins words as in "full, equal or none".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	last := len(words) - 1
	return strings.Join(words[:last], ", ") + " or " + words[last]
}

// MaxDelay returns d(attempt), the wait after the given attempt fails
// before jitter: the largest delay [Policy.Delay] can return for it.
// Attempts below 1 count as 1. The arithmetic saturates at [Policy.Ceiling]
// for any attempt, up to [math.MaxInt], and never overflows. An unset
// [Backoff] counts as [Exponential]; a negative Ceiling counts as 0.
func (p Policy) MaxDelay(attempt int) time.Duration {
	n := max(attempt, 1)
	ceiling := max(p.Ceiling, 0)
	base := min(max(p.Base, 0), ceiling)
	var d time.Duration
	switch p.Backoff {
	case Constant:
		d = base
	case Linear:
		d = mulSat(base, int64(n))
	default:
		d = base
		if n-1 < 63 {
			d = mulSat(base, int64(1)<<(n-1))
		} else if base > 0 {
			d = math.MaxInt64
		}
	}
	return min(d, ceiling)
}

// Delay returns the wait after the given attempt fails:
// [Policy.MaxDelay](attempt) with the policy's jitter applied to the
// uniform draw u in [0,1), truncated to whole milliseconds. It never
// exceeds MaxDelay, hence never [Policy.Ceiling], and is never negative. A
// u outside [0,1), or NaN, is clamped into it.
func (p Policy) Delay(attempt int, u float64) time.Duration {
	d := p.Jitter.apply(p.MaxDelay(attempt), u)
	return d.Truncate(time.Millisecond)
}

// mulSat returns d·n, or math.MaxInt64 where that would overflow.
// d and n are not negative. n is an int64 so that 32-bit platforms
// (linux/arm) compute the same schedule.
func mulSat(d time.Duration, n int64) time.Duration {
	if d == 0 || n == 0 {
		return 0
	}
	if n > math.MaxInt64/int64(d) {
		return math.MaxInt64
	}
	return d * time.Duration(n)
}
