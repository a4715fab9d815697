package fuzz

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

var (
	backoffs = []litequeue.Backoff{"", litequeue.Exponential, litequeue.Linear, litequeue.Constant}
	jitters  = []litequeue.Jitter{"", litequeue.FullJitter, litequeue.EqualJitter, litequeue.NoJitter}
)

// FuzzPolicyDelay checks the retry arithmetic of any valid policy, for any
// attempt number and any draw u: 0 ≤ Delay ≤ MaxDelay ≤ Ceiling, MaxDelay
// as the formula says and never decreasing, EqualJitter at least half of
// MaxDelay, whole milliseconds, and no panic.
func FuzzPolicyDelay(f *testing.F) {
	// attempt is an int64 so that the corpus loads on 32-bit platforms,
	// where it wraps into an int.
	f.Fuzz(func(t *testing.T, backoff byte, base, ceiling, attempt64 int64, u float64) {
		attempt := int(attempt64)
		// 0 < base ≤ ceiling ≤ 24h, from any two numbers.
		c := 1 + time.Duration(uint64(ceiling)%uint64(litequeue.CeilingLimit))
		p := litequeue.Policy{
			Backoff:  backoffs[int(backoff)%len(backoffs)],
			Base:     1 + time.Duration(uint64(base)%uint64(c)),
			Ceiling:  c,
			MaxTries: litequeue.MaxTriesLimit,
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%+v: Validate: %v", p, err)
		}

		maxDelay := p.MaxDelay(attempt)
		if want := maxDelayModel(p, attempt); maxDelay != want {
			t.Fatalf("%+v: MaxDelay(%d) = %v, want %v", p, attempt, maxDelay, want)
		}
		if maxDelay <= 0 || maxDelay > p.Ceiling {
			t.Fatalf("%+v: MaxDelay(%d) = %v, want in (0, %v]", p, attempt, maxDelay, p.Ceiling)
		}
		if attempt < math.MaxInt {
			if next := p.MaxDelay(attempt + 1); next < maxDelay {
				t.Fatalf("%+v: MaxDelay(%d) = %v > MaxDelay(%d) = %v", p, attempt, maxDelay, attempt+1, next)
			}
		}

		for _, j := range jitters {
			p.Jitter = j
			d := p.Delay(attempt, u)
			if d < 0 || d > maxDelay {
				t.Fatalf("%+v: Delay(%d, %v) = %v, want in [0, %v]", p, attempt, u, d, maxDelay)
			}
			if d%time.Millisecond != 0 {
				t.Fatalf("%+v: Delay(%d, %v) = %v, not whole milliseconds", p, attempt, u, d)
			}
			// Truncating to milliseconds keeps d at least the truncated
			// least value of each jitter.
			var least time.Duration
			switch j {
			case litequeue.EqualJitter:
				least = (maxDelay / 2).Truncate(time.Millisecond)
			case litequeue.NoJitter:
				least = maxDelay.Truncate(time.Millisecond)
			}
			if d < least {
				t.Fatalf("%+v: Delay(%d, %v) = %v, want at least %v", p, attempt, u, d, least)
			}
		}
	})
}

// maxDelayModel computes MaxDelay the plain way, for base ≤ ceiling ≤ 24h,
// where nothing below the ceiling can overflow.
func maxDelayModel(p litequeue.Policy, attempt int) time.Duration {
	n := max(attempt, 1)
	switch p.Backoff {
	case litequeue.Constant:
		return p.Base
	case litequeue.Linear:
		if int64(n) > int64(p.Ceiling/p.Base) { // int64: on 32-bit platforms too
			return p.Ceiling
		}
		return p.Base * time.Duration(n)
	}
	d := p.Base
	for i := 1; i < n && d < p.Ceiling; i++ {
		d *= 2
	}
	return min(d, p.Ceiling)
}

// lineThenProblem matches what follows "<file>:" in an error of LoadConfig.
var lineThenProblem = regexp.MustCompile(`^[1-9][0-9]*: .`)

// FuzzLoadConfig checks that LoadConfig never panics on any file, and
// returns either an error "<file>:<line>: …" or Options whose policies are
// all valid.
func FuzzLoadConfig(f *testing.F) {
	// One file per fuzzing process, which runs its inputs one at a time.
	path := filepath.Join(f.TempDir(), "litequeue.toml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		o, err := litequeue.LoadConfig(path)
		if err != nil {
			rest, ok := strings.CutPrefix(err.Error(), path+":")
			if !ok || !lineThenProblem.MatchString(rest) {
				t.Fatalf("LoadConfig error %q does not start with %q and a line", err, path+":")
			}
			return
		}
		if err := o.Retry.Validate(); err != nil {
			t.Fatalf("LoadConfig returned an invalid Retry %+v: %v", o.Retry, err)
		}
		for name, p := range o.Policies {
			if err := p.Validate(); err != nil {
				t.Fatalf("LoadConfig returned an invalid policy %q %+v: %v", name, p, err)
			}
		}
		if o.VisibilityTimeout < time.Millisecond || o.DeadTTL < 0 || o.KeepFinished < 0 || o.MaxPayload < 0 {
			t.Fatalf("LoadConfig returned out-of-range queue settings: %+v", o)
		}
		if o.Synchronous != "full" && o.Synchronous != "normal" {
			t.Fatalf("LoadConfig returned synchronous %q", o.Synchronous)
		}
	})
}
