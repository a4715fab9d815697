package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// openConfigured opens a queue on a new file with the Options of text, as
// a litequeue.toml, and a mock clock, which it returns.
func openConfigured(t *testing.T, text string) (*litequeue.Queue, *clock.Mock, string) {
	t.Helper()
	opts := loadConfig(t, text)
	clk := newMock()
	opts.Clock = clk
	q, path := openQueue(t, opts)
	return q, clk, path
}

// TestOpen_Kinds checks that Open refuses a kind of Options.Kinds with a
// field out of its limits, with an error naming the kind and the field
// that wraps a *FieldError, exactly where Handle panics on the
// HandlerOption that the field stands for; and accepts the rest.
func TestOpen_Kinds(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for i, tt := range []struct {
		kind litequeue.KindOptions
		opt  litequeue.HandlerOption // the same, as Handle takes it
		want string                  // Open's error, after the path on the file; "": none
	}{
		{litequeue.KindOptions{MaxRunning: -1}, litequeue.MaxRunning(-1),
			"kinds.k: max_running -1 is under the minimum of 1"},
		{litequeue.KindOptions{MaxRunning: 1}, litequeue.MaxRunning(1), ""},
		{litequeue.KindOptions{RateLimit: -1, RatePer: time.Minute}, litequeue.RateLimit(-1, time.Minute),
			"kinds.k: rate_limit -1 is under the minimum of 1"},
		{litequeue.KindOptions{RatePer: time.Minute}, litequeue.RateLimit(0, time.Minute),
			"kinds.k: rate_per 1m0s is given without rate_limit: give both or neither"},
		{litequeue.KindOptions{RateLimit: 5}, litequeue.RateLimit(5, 0),
			"kinds.k: rate_limit 5 is given without rate_per: give both or neither"},
		{litequeue.KindOptions{RateLimit: 5, RatePer: time.Millisecond - 1}, litequeue.RateLimit(5, time.Millisecond-1),
			"kinds.k: rate_per 999.999µs is under the minimum of 1ms"},
		{litequeue.KindOptions{RateLimit: 1, RatePer: time.Millisecond}, litequeue.RateLimit(1, time.Millisecond), ""},
		{litequeue.KindOptions{ExpireAfter: -time.Second}, litequeue.WithExpiry(-time.Second),
			"kinds.k: expire_after -1s must be positive"},
		{litequeue.KindOptions{ExpireAfter: time.Nanosecond}, litequeue.WithExpiry(time.Nanosecond), ""},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Failures: -1}}, litequeue.WithBreaker(litequeue.Breaker{Failures: -1}),
			"kinds.k.breaker: failures -1 is under the minimum of 1"},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Ratio: 1.5}}, litequeue.WithBreaker(litequeue.Breaker{Ratio: 1.5}),
			"kinds.k.breaker: ratio 1.5 is over the limit of 1"},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Ratio: -0.1}}, litequeue.WithBreaker(litequeue.Breaker{Ratio: -0.1}),
			"kinds.k.breaker: ratio -0.1 must be positive"},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Ratio: 1}}, litequeue.WithBreaker(litequeue.Breaker{Ratio: 1}), ""},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Window: -time.Second}}, litequeue.WithBreaker(litequeue.Breaker{Window: -time.Second}),
			"kinds.k.breaker: window -1s must be positive"},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Cooldown: -time.Second}}, litequeue.WithBreaker(litequeue.Breaker{Cooldown: -time.Second}),
			"kinds.k.breaker: cooldown -1s must be positive"},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Cooldown: time.Minute, MaxCooldown: time.Second}},
			litequeue.WithBreaker(litequeue.Breaker{Cooldown: time.Minute, MaxCooldown: time.Second}),
			"kinds.k.breaker: max_cooldown 1s is under the minimum of 1m0s"},
		{litequeue.KindOptions{Breaker: &litequeue.Breaker{Cooldown: time.Hour}}, litequeue.WithBreaker(litequeue.Breaker{Cooldown: time.Hour}), ""},
	} {
		name := tt.want
		if name == "" {
			name = fmt.Sprint("accepted ", i)
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "queue.db")
			got, err := openBackend(t, path, litequeue.Options{Kinds: map[string]litequeue.KindOptions{"k": tt.kind}})
			if err == nil {
				got.Close()
			}
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Open: %v, want no error", err)
			case tt.want != "" && err == nil:
				t.Errorf("Open: no error, want %q", tt.want)
			case tt.want != "" && !strings.HasSuffix(err.Error(), ": "+tt.want) && err.Error() != tt.want:
				t.Errorf("Open:\ngot  %v\nwant %s", err, tt.want)
			case tt.want != "" && !errors.As(err, new(*litequeue.FieldError)):
				t.Errorf("Open: %v does not wrap a *FieldError", err)
			}
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				q.Handle(fmt.Sprint("k", i), ok, tt.opt)
				return false
			}()
			if want := tt.want != ""; panicked != want {
				t.Errorf("Handle with the HandlerOption: panicked %v, want %v, as Open refuses", panicked, want)
			}
		})
	}
}

// TestHandle_ChecksInOpensOrder gives Handle, and Open in Options.Kinds,
// a kind with two fields out of their limits: both refuse the same one
// first, each in its own words.
func TestHandle_ChecksInOpensOrder(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind      litequeue.KindOptions
		opts      []litequeue.HandlerOption
		open, han string
	}{
		{litequeue.KindOptions{MaxRunning: -1, ExpireAfter: -time.Second},
			[]litequeue.HandlerOption{litequeue.WithExpiry(-time.Second), litequeue.MaxRunning(-1)},
			"kinds.k: max_running -1 is under the minimum of 1", "MaxRunning(-1): n must be at least 1"},
		{litequeue.KindOptions{ExpireAfter: -time.Second, Breaker: &litequeue.Breaker{Failures: -1}},
			[]litequeue.HandlerOption{litequeue.WithBreaker(litequeue.Breaker{Failures: -1}), litequeue.WithExpiry(-time.Second)},
			"kinds.k: expire_after -1s must be positive", "WithExpiry -1s must be positive"},
	} {
		t.Run(tt.open, func(t *testing.T) {
			t.Parallel()
			_, err := openBackend(t, filepath.Join(t.TempDir(), "queue.db"), litequeue.Options{Kinds: map[string]litequeue.KindOptions{"k": tt.kind}})
			if err == nil || !strings.HasSuffix(err.Error(), tt.open) {
				t.Errorf("Open: %v, want one ending %q", err, tt.open)
			}
			q, _ := openQueue(t, litequeue.Options{})
			want := `litequeue: Handle("k"): ` + tt.han
			defer func() {
				if r := recover(); r != want {
					t.Errorf("Handle panicked with %q, want %q", r, want)
				}
			}()
			q.Handle("k", ok, tt.opts...)
		})
	}
}

// TestOpen_KindsNames checks that Open refuses a kind without a name, and
// names a kind that TOML quotes as it does.
func TestOpen_KindsNames(t *testing.T) {
	t.Parallel()
	for name, tt := range map[string]struct {
		kinds map[string]litequeue.KindOptions
		want  string
	}{
		"empty": {map[string]litequeue.KindOptions{"": {MaxRunning: 1}},
			`kinds."": a kind needs a name (Handle refuses an empty kind)`},
		"quoted": {map[string]litequeue.KindOptions{"sms.code": {MaxRunning: -1}},
			`kinds."sms.code": max_running -1 is under the minimum of 1`},
		"first by name": {map[string]litequeue.KindOptions{"b": {MaxRunning: -1}, "a": {ExpireAfter: -1}, "c": {MaxRunning: -3}},
			`kinds.a: expire_after -1ns must be positive`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := openBackend(t, filepath.Join(t.TempDir(), "queue.db"), litequeue.Options{Kinds: tt.kinds})
			if err == nil || !strings.HasSuffix(err.Error(), ": "+tt.want) && err.Error() != tt.want {
				t.Errorf("Open: %v, want %s", err, tt.want)
			}
		})
	}
}

// runningAtOnce handles "report" on each of qs (Queues on one file) with
// opts, under a Work of 6 workers each, enqueues 4 of its jobs ahead of 3
// of another kind, and returns how many of the report jobs run (are
// leased) at once, once the other kind's jobs ran and at least least
// report runs started. Without a limit, the workers claim the report jobs
// first, all 4.
func runningAtOnce(t *testing.T, qs []*litequeue.Queue, least int, opts ...litequeue.HandlerOption) int {
	t.Helper()
	release := make(chan struct{})
	var started, others atomic.Int32
	for _, q := range qs {
		q.Handle("report", func(ctx context.Context, job *litequeue.Job) error {
			started.Add(1)
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, opts...)
		q.Handle("other", func(context.Context, *litequeue.Job) error { others.Add(1); return nil })
	}
	q := qs[0]
	for range 4 {
		enqueue(t, q, "report", nil)
	}
	for range 3 {
		enqueue(t, q, "other", nil)
	}
	for _, q := range qs {
		stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 6})
		defer stop()
	}
	defer close(release) // first: the runs end, and Work stops
	waitFor(t, "the other kind's runs, and the report runs to start", func() bool {
		return others.Load() == 3 && started.Load() >= int32(least)
	})
	running, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Running, Kind: "report"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("4 report jobs under %d Queue(s) × 6 workers: %d leased at once, %d started; 3 other runs meanwhile", len(qs), len(running), started.Load())
	return len(running)
}

// TestHandle_KindsMaxRunning checks that max_running in the file holds
// under Work, that a MaxRunning given to Handle wins over it, and that
// Open copied Options.Kinds.
func TestHandle_KindsMaxRunning(t *testing.T) {
	t.Parallel()
	const file = "[kinds.report]\nmax_running = 1\n"
	t.Run("from the file", func(t *testing.T) {
		t.Parallel()
		q, _, _ := openConfigured(t, file)
		if got := runningAtOnce(t, []*litequeue.Queue{q}, 1); got != 1 {
			t.Errorf("%d report runs at once, want 1 (max_running)", got)
		}
	})
	t.Run("two Queues from the file", func(t *testing.T) {
		t.Parallel()
		q, clk, path := openConfigured(t, file)
		opts := loadConfig(t, file)
		opts.Clock = clk
		other := openAt(t, path, opts)
		if got := runningAtOnce(t, []*litequeue.Queue{q, other}, 1); got != 1 {
			t.Errorf("%d report runs at once under two Queues, want 1 (max_running)", got)
		}
	})
	t.Run("MaxRunning wins", func(t *testing.T) {
		t.Parallel()
		q, _, _ := openConfigured(t, file)
		if got := runningAtOnce(t, []*litequeue.Queue{q}, 2, litequeue.MaxRunning(2)); got != 2 {
			t.Errorf("%d report runs at once, want 2 (MaxRunning(2) over max_running = 1)", got)
		}
	})
	t.Run("copied by Open", func(t *testing.T) {
		t.Parallel()
		opts := loadConfig(t, file)
		q, _ := openQueue(t, opts)
		opts.Kinds["report"] = litequeue.KindOptions{MaxRunning: 3}
		if got := runningAtOnce(t, []*litequeue.Queue{q}, 1); got != 1 {
			t.Errorf("%d report runs at once, want 1: the Kinds that Open was given", got)
		}
	})
}

// TestHandle_KindsRateLimit steps RunDue through a kind whose rate limit
// the file sets: its starts hold, a RateLimit given to Handle wins, and a
// MaxRunning given to Handle leaves the file's rate in force.
func TestHandle_KindsRateLimit(t *testing.T) {
	t.Parallel()
	const file = "[kinds.report]\nmax_running = 1\nrate_limit = 2\nrate_per = \"1m\"\n"
	for _, tt := range []struct {
		name string
		opts []litequeue.HandlerOption
		want int // runs a minute
	}{
		{"from the file", nil, 2},
		{"RateLimit wins", []litequeue.HandlerOption{litequeue.RateLimit(3, time.Minute)}, 3},
		{"MaxRunning keeps the file's rate", []litequeue.HandlerOption{litequeue.MaxRunning(5)}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, clk, _ := openConfigured(t, file)
			q.Handle("report", ok, tt.opts...)
			for range 5 {
				enqueue(t, q, "report", nil)
			}
			if got := runDue(t, q); got != tt.want {
				t.Errorf("first minute: %d runs, want %d", got, tt.want)
			}
			clk.Add(time.Minute)
			if got := runDue(t, q); got != min(tt.want, 5-tt.want) {
				t.Errorf("second minute: %d runs, want %d", got, min(tt.want, 5-tt.want))
			}
		})
	}
}

// TestHandle_KindsExpiry checks that expire_after in the file expires the
// kind's jobs on the mock clock, also those that a Queue without a handler
// of the kind enqueues; and that WithExpiry and ExpireAfter win over it.
func TestHandle_KindsExpiry(t *testing.T) {
	t.Parallel()
	const file = "[kinds.sms]\nexpire_after = \"1m\"\n"
	for _, tt := range []struct {
		name    string
		handle  []litequeue.HandlerOption
		enqueue []litequeue.EnqueueOption
		expires time.Duration // after epoch
	}{
		{"from the file", nil, nil, time.Minute},
		{"WithExpiry wins", []litequeue.HandlerOption{litequeue.WithExpiry(time.Hour)}, nil, time.Hour},
		{"ExpireAfter wins", nil, []litequeue.EnqueueOption{litequeue.ExpireAfter(2 * time.Minute)}, 2 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, clk, _ := openConfigured(t, file)
			q.Handle("sms", ok, tt.handle...)
			job := enqueue(t, q, "sms", nil, tt.enqueue...)
			if got, want := get(t, q, job.ID).ExpiresAt, epoch.Add(tt.expires); !got.Equal(want) {
				t.Errorf("ExpiresAt %v, want %v", got, want)
			}
			clk.Add(tt.expires)
			if n := runDue(t, q); n != 0 {
				t.Errorf("RunDue ran %d at the expiry, want none", n)
			}
			if got := get(t, q, job.ID).State; got != litequeue.Expired {
				t.Errorf("state %s at the expiry, want %s", got, litequeue.Expired)
			}
		})
	}
	t.Run("enqueued without a handler", func(t *testing.T) {
		t.Parallel()
		producer, clk, path := openConfigured(t, file)
		job := enqueue(t, producer, "sms", nil)
		worker := openAt(t, path, litequeue.Options{Clock: clk}) // another process, without the file
		worker.Handle("sms", ok)
		clk.Add(time.Minute)
		if n := runDue(t, worker); n != 0 {
			t.Errorf("RunDue ran %d at the expiry, want none", n)
		}
		if got := get(t, worker, job.ID).State; got != litequeue.Expired {
			t.Errorf("state %s at the expiry, want %s", got, litequeue.Expired)
		}
	})
}

// TestHandle_KindsBreaker checks that a breaker in the file opens after
// its failures, that breaker = true takes the defaults, and that a
// WithBreaker given to Handle wins over the file's.
func TestHandle_KindsBreaker(t *testing.T) {
	t.Parallel()
	const file = `
[retry]
max_tries = 1 # a failed job dies: it does not run again

[kinds.charge.breaker]
failures = 3
ratio = 1

[kinds.pay]
breaker = true
`
	for _, tt := range []struct {
		name, kind string
		opts       []litequeue.HandlerOption
		want       int // runs before the breaker opens
	}{
		{"from the file", "charge", nil, 3},
		{"breaker = true", "pay", nil, litequeue.DefaultBreakerFailures},
		{"WithBreaker wins", "charge", []litequeue.HandlerOption{litequeue.WithBreaker(litequeue.Breaker{Failures: 4})}, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q, _, _ := openConfigured(t, file)
			q.Handle(tt.kind, outcomeHandler, tt.opts...)
			for range tt.want + 2 {
				enqueue(t, q, tt.kind, "fail")
			}
			if got := runDue(t, q); got != tt.want {
				t.Errorf("RunDue ran %d, want %d before the breaker opened", got, tt.want)
			}
			b := breakers(t, q)
			if diff := cmp.Diff([]string{tt.kind}, sortedNames(b)); diff != "" {
				t.Errorf("breakers not closed (-want +got):\n%s", diff)
			}
			if got := b[tt.kind].State; got != "open" {
				t.Errorf("breaker %s, want open", got)
			}
		})
	}
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
