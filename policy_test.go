package litequeue_test

import (
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// attempt62 is 1<<62 on 64-bit platforms (1<<30 on 32-bit ones).
const attempt62 = math.MaxInt>>1 + 1

func TestPolicy_MaxDelay(t *testing.T) {
	t.Parallel()
	policy := func(b litequeue.Backoff, base, ceiling time.Duration) litequeue.Policy {
		return litequeue.Policy{Backoff: b, Base: base, Ceiling: ceiling, MaxTries: 8}
	}
	exponential := policy(litequeue.Exponential, time.Second, 10*time.Second)
	linear := policy(litequeue.Linear, time.Second, 10*time.Second)
	constant := policy(litequeue.Constant, 3*time.Second, 10*time.Second)
	tiny := policy(litequeue.Exponential, time.Nanosecond, litequeue.CeilingLimit)
	for _, tt := range []struct {
		name    string
		policy  litequeue.Policy
		attempt int
		want    time.Duration
	}{
		{"exponential 1", exponential, 1, 1 * time.Second},
		{"exponential 2", exponential, 2, 2 * time.Second},
		{"exponential 3", exponential, 3, 4 * time.Second},
		{"exponential 4", exponential, 4, 8 * time.Second},
		{"exponential 5 capped", exponential, 5, 10 * time.Second},
		{"exponential 0 counts as 1", exponential, 0, 1 * time.Second},
		{"exponential -7 counts as 1", exponential, -7, 1 * time.Second},
		{"exponential MinInt counts as 1", exponential, math.MinInt, 1 * time.Second},
		{"exponential 63", exponential, 63, 10 * time.Second},
		{"exponential 64", exponential, 64, 10 * time.Second},
		{"exponential 1<<62", exponential, attempt62, 10 * time.Second},
		{"exponential MaxInt", exponential, math.MaxInt, 10 * time.Second},
		{"unset backoff is exponential", policy("", time.Second, 10*time.Second), 3, 4 * time.Second},

		{"linear 1", linear, 1, 1 * time.Second},
		{"linear 2", linear, 2, 2 * time.Second},
		{"linear 7", linear, 7, 7 * time.Second},
		{"linear 11 capped", linear, 11, 10 * time.Second},
		{"linear 0 counts as 1", linear, 0, 1 * time.Second},
		{"linear MaxInt", linear, math.MaxInt, 10 * time.Second},

		{"constant 1", constant, 1, 3 * time.Second},
		{"constant 50", constant, 50, 3 * time.Second},
		{"constant -1", constant, -1, 3 * time.Second},
		{"constant MaxInt", constant, math.MaxInt, 3 * time.Second},
		{"constant capped", policy(litequeue.Constant, time.Minute, time.Second), 1, time.Second},

		// 1ns·2^(n−1) passes every power of two below 2^63 on its way
		// to the ceiling.
		{"saturation 2^40ns", tiny, 41, 1 << 40},
		{"saturation 2^62ns capped", tiny, 63, litequeue.CeilingLimit},
		{"saturation 1<<62", tiny, attempt62, litequeue.CeilingLimit},
		{"saturation MaxInt", tiny, math.MaxInt, litequeue.CeilingLimit},
		{"saturation linear MaxInt", policy(litequeue.Linear, litequeue.CeilingLimit, litequeue.CeilingLimit), math.MaxInt, litequeue.CeilingLimit},
		{"saturation huge ceiling", policy(litequeue.Exponential, time.Hour, math.MaxInt64), math.MaxInt, math.MaxInt64},
		{"negative ceiling is 0", policy(litequeue.Exponential, time.Second, -time.Second), 3, 0},
	} {
		if got := tt.policy.MaxDelay(tt.attempt); got != tt.want {
			t.Errorf("%s: MaxDelay(%d) = %v, want %v", tt.name, tt.attempt, got, tt.want)
		}
	}
}

func TestPolicy_Delay(t *testing.T) {
	t.Parallel()
	// Attempt 3 of an exponential policy from 1s: MaxDelay is 4s.
	policy := func(j litequeue.Jitter) litequeue.Policy {
		return litequeue.Policy{Base: time.Second, Ceiling: 10 * time.Second, MaxTries: 8, Jitter: j}
	}
	// The largest u below 1 gives 4s·(1−2⁻⁵³), just under 4s, truncated
	// to 3.999s.
	const justUnder4s = 3999 * time.Millisecond
	for _, tt := range []struct {
		jitter litequeue.Jitter
		u      float64
		want   time.Duration
	}{
		{litequeue.FullJitter, 0, 0},
		{litequeue.FullJitter, 0.25, 1 * time.Second},
		{litequeue.FullJitter, 0.5, 2 * time.Second},
		{litequeue.FullJitter, 0.9999, justUnder4s},
		{litequeue.FullJitter, math.Nextafter(1, 0), justUnder4s},
		{litequeue.FullJitter, 1e-10, 0}, // 0.4ns, truncated
		{"", 0.5, 2 * time.Second},       // unset is full

		{litequeue.EqualJitter, 0, 2 * time.Second},
		{litequeue.EqualJitter, 0.5, 3 * time.Second},
		{litequeue.EqualJitter, 0.75, 3500 * time.Millisecond},
		{litequeue.EqualJitter, math.Nextafter(1, 0), justUnder4s},

		{litequeue.NoJitter, 0, 4 * time.Second},
		{litequeue.NoJitter, 0.5, 4 * time.Second},
		{litequeue.NoJitter, math.Nextafter(1, 0), 4 * time.Second},

		// u outside [0,1) is clamped into it; NaN counts as 0.
		{litequeue.FullJitter, math.NaN(), 0},
		{litequeue.FullJitter, -0.5, 0},
		{litequeue.FullJitter, math.Inf(-1), 0},
		{litequeue.FullJitter, 1, justUnder4s},
		{litequeue.FullJitter, 2, justUnder4s},
		{litequeue.FullJitter, math.Inf(1), justUnder4s},
		{litequeue.EqualJitter, math.NaN(), 2 * time.Second},
		{litequeue.EqualJitter, -1, 2 * time.Second},
		{litequeue.EqualJitter, 1, justUnder4s},
		{litequeue.EqualJitter, math.Inf(1), justUnder4s},
		{litequeue.NoJitter, math.NaN(), 4 * time.Second},
		{litequeue.NoJitter, math.Inf(1), 4 * time.Second},
	} {
		if got := policy(tt.jitter).Delay(3, tt.u); got != tt.want {
			t.Errorf("jitter %q: Delay(3, %v) = %v, want %v", tt.jitter, tt.u, got, tt.want)
		}
	}
}

// TestPolicy_DelayTruncates checks that a delay is whole milliseconds.
func TestPolicy_DelayTruncates(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		jitter litequeue.Jitter
		u      float64
		want   time.Duration
	}{
		{litequeue.FullJitter, 0.5, 500 * time.Millisecond},   // 500.5ms
		{litequeue.EqualJitter, 0, 500 * time.Millisecond},    // 500.5ms
		{litequeue.EqualJitter, 0.5, 750 * time.Millisecond},  // 750.75ms
		{litequeue.NoJitter, 0.5, 1001 * time.Millisecond},    // 1001ms
		{litequeue.NoJitter, 0.999, 1001 * time.Millisecond},  // 1001ms
		{litequeue.FullJitter, 0.999, 999 * time.Millisecond}, // 999.999ms
	} {
		p := litequeue.Policy{Backoff: litequeue.Constant, Base: 1001 * time.Millisecond, Ceiling: time.Hour, MaxTries: 2, Jitter: tt.jitter}
		if got := p.Delay(1, tt.u); got != tt.want {
			t.Errorf("jitter %q: Delay(1, %v) = %v, want %v", tt.jitter, tt.u, got, tt.want)
		}
	}
	sub := litequeue.Policy{Backoff: litequeue.Constant, Base: 999 * time.Microsecond, Ceiling: time.Second, MaxTries: 2, Jitter: litequeue.NoJitter}
	if got := sub.Delay(1, 0); got != 0 {
		t.Errorf("Delay of a 999µs wait = %v, want 0", got)
	}
}

func TestPolicy_Validate(t *testing.T) {
	t.Parallel()
	with := func(f func(p *litequeue.Policy)) litequeue.Policy {
		p := litequeue.DefaultPolicy()
		f(&p)
		return p
	}
	for _, tt := range []struct {
		name   string
		policy litequeue.Policy
		want   string // "" for valid
	}{
		{"default", litequeue.DefaultPolicy(), ""},
		{"unset backoff and jitter", with(func(p *litequeue.Policy) { p.Backoff, p.Jitter = "", "" }), ""},
		{"one try", with(func(p *litequeue.Policy) { p.MaxTries = 1 }), ""},
		{"50 tries", with(func(p *litequeue.Policy) { p.MaxTries = 50 }), ""},
		{"base at ceiling at limit", with(func(p *litequeue.Policy) { p.Base, p.Ceiling = 24*time.Hour, 24*time.Hour }), ""},
		{"linear, equal", with(func(p *litequeue.Policy) { p.Backoff, p.Jitter = litequeue.Linear, litequeue.EqualJitter }), ""},
		{"constant, none", with(func(p *litequeue.Policy) { p.Backoff, p.Jitter = litequeue.Constant, litequeue.NoJitter }), ""},

		{"51 tries", with(func(p *litequeue.Policy) { p.MaxTries = 51 }), "max_tries 51 is over the limit of 50"},
		{"0 tries", with(func(p *litequeue.Policy) { p.MaxTries = 0 }), "max_tries 0 is under the minimum of 1"},
		{"negative tries", with(func(p *litequeue.Policy) { p.MaxTries = -3 }), "max_tries -3 is under the minimum of 1"},
		{"25h ceiling", with(func(p *litequeue.Policy) { p.Ceiling = 25 * time.Hour }), "ceiling 25h0m0s is over the limit of 24h0m0s"},
		{"base 0", with(func(p *litequeue.Policy) { p.Base = 0 }), "base 0s must be positive"},
		{"negative base", with(func(p *litequeue.Policy) { p.Base = -time.Second }), "base -1s must be positive"},
		{"base over ceiling", with(func(p *litequeue.Policy) { p.Base = 20 * time.Minute }), "base 20m0s is over the ceiling of 15m0s"},
		{"zero ceiling", with(func(p *litequeue.Policy) { p.Ceiling = 0 }), "ceiling 0s must be positive"},
		{"negative ceiling", with(func(p *litequeue.Policy) { p.Ceiling = -time.Minute }), "ceiling -1m0s must be positive"},
		{"unknown backoff", with(func(p *litequeue.Policy) { p.Backoff = "fibonacci" }), `policy "fibonacci" is unknown (want exponential, linear or constant)`},
		{"unknown jitter", with(func(p *litequeue.Policy) { p.Jitter = "half" }), `jitter "half" is unknown (want full, equal or none)`},
		{"zero policy", litequeue.Policy{}, "max_tries 0 is under the minimum of 1"},
	} {
		err := tt.policy.Validate()
		var got string
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: Validate() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestFieldError_Fields checks that Validate, Open and LoadConfig report a
// value out of its limits as a *FieldError that names the policy, the field,
// the value and the limit.
func TestFieldError_Fields(t *testing.T) {
	t.Parallel()
	validate := func(f func(p *litequeue.Policy)) func(t *testing.T) error {
		return func(t *testing.T) error {
			p := litequeue.DefaultPolicy()
			f(&p)
			return p.Validate()
		}
	}
	open := func(opts litequeue.Options) func(t *testing.T) error {
		return func(t *testing.T) error {
			q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), opts)
			if err == nil {
				q.Close()
			}
			return err
		}
	}
	load := func(text string) func(t *testing.T) error {
		return func(t *testing.T) error {
			_, err := litequeue.LoadConfig(writeConfig(t, text))
			return err
		}
	}
	for _, tt := range []struct {
		name string
		err  func(t *testing.T) error
		want litequeue.FieldError
	}{
		{"Validate max_tries", validate(func(p *litequeue.Policy) { p.MaxTries = 51 }),
			litequeue.FieldError{Field: "max_tries", Value: 51, Limit: 50}},
		{"Validate negative max_tries", validate(func(p *litequeue.Policy) { p.MaxTries = -3 }),
			litequeue.FieldError{Field: "max_tries", Value: -3, Limit: 1}},
		{"Validate base", validate(func(p *litequeue.Policy) { p.Base = -time.Second }),
			litequeue.FieldError{Field: "base", Value: -time.Second, Limit: time.Duration(0)}},
		{"Validate base over ceiling", validate(func(p *litequeue.Policy) { p.Base = 20 * time.Minute }),
			litequeue.FieldError{Field: "base", Value: 20 * time.Minute, Limit: 15 * time.Minute}},
		{"Validate ceiling", validate(func(p *litequeue.Policy) { p.Ceiling = 25 * time.Hour }),
			litequeue.FieldError{Field: "ceiling", Value: 25 * time.Hour, Limit: 24 * time.Hour}},
		{"Validate backoff", validate(func(p *litequeue.Policy) { p.Backoff = "fibonacci" }),
			litequeue.FieldError{Field: "policy", Value: litequeue.Backoff("fibonacci"), Limit: []string{"exponential", "linear", "constant"}}},
		{"Validate jitter", validate(func(p *litequeue.Policy) { p.Jitter = "half" }),
			litequeue.FieldError{Field: "jitter", Value: litequeue.Jitter("half"), Limit: []string{"full", "equal", "none"}}},

		{"Open retry", open(litequeue.Options{Retry: litequeue.Policy{Ceiling: time.Second}}),
			litequeue.FieldError{Field: "base", Value: 2 * time.Second, Limit: time.Second}},
		{"Open named policy", open(litequeue.Options{Policies: map[string]litequeue.Policy{"ok": {}, "slow": {MaxTries: 51}}}),
			litequeue.FieldError{Policy: "slow", Field: "max_tries", Value: 51, Limit: 50}},
		{"Open visibility_timeout", open(litequeue.Options{VisibilityTimeout: 10 * time.Microsecond}),
			litequeue.FieldError{Field: "visibility_timeout", Value: 10 * time.Microsecond, Limit: time.Millisecond}},
		{"Open synchronous", open(litequeue.Options{Synchronous: "off"}),
			litequeue.FieldError{Field: "synchronous", Value: "off", Limit: []string{"full", "normal"}}},

		{"LoadConfig retry", load("[retry]\nmax_tries = 80\n"),
			litequeue.FieldError{Field: "max_tries", Value: 80, Limit: 50}},
		{"LoadConfig named policy", load("[retry]\nbase = \"1m\"\n[retry.fast]\nceiling = \"30s\"\n"),
			litequeue.FieldError{Policy: "fast", Field: "base", Value: time.Minute, Limit: 30 * time.Second}},
		{"LoadConfig queue", load("[queue]\nmax_payload = -1\n"),
			litequeue.FieldError{Field: "max_payload", Value: -1, Limit: 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.err(t)
			var got *litequeue.FieldError
			if !errors.As(err, &got) {
				t.Fatalf("got %v, want a *FieldError", err)
			}
			if diff := cmp.Diff(tt.want, *got, cmpopts.IgnoreUnexported(litequeue.FieldError{})); diff != "" {
				t.Errorf("FieldError mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
