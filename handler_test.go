package litequeue_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// TestQueue_HandlePanics checks the set-up mistakes Handle refuses.
func TestQueue_HandlePanics(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Policies: map[string]litequeue.Policy{"slow": {MaxTries: 3}}})
	ok := func(ctx context.Context, job *litequeue.Job) error { return nil }
	q.Handle("taken", ok, litequeue.UsePolicy("slow"))
	for _, tt := range []struct {
		name string
		call func()
		want string
	}{
		{"empty kind", func() { q.Handle("", ok) }, "empty kind"},
		{"nil handler", func() { q.Handle("k", nil) }, `Handle("k") with a nil handler`},
		{"twice", func() { q.Handle("taken", ok) }, `Handle("taken") twice`},
		{"unknown policy", func() { q.Handle("k", ok, litequeue.UsePolicy("fast")) }, `unknown policy "fast" (Options.Policies has [slow])`},
		{"negative timeout", func() { q.Handle("k", ok, litequeue.WithTimeout(-1)) }, "negative timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tt.want) {
					t.Fatalf("panic %v, want one containing %q", r, tt.want)
				}
			}()
			tt.call()
		})
	}
}

// TestQueue_NamedPolicy uses a named policy's MaxTries and delays.
func TestQueue_NamedPolicy(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{
		Retry:    litequeue.Policy{MaxTries: 5},
		Policies: map[string]litequeue.Policy{"once": {MaxTries: 1}},
	})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return context.Canceled }, litequeue.UsePolicy("once"))
	j := enqueue(t, q, "k", nil)
	if j.MaxTries != 1 {
		t.Fatalf("enqueued job has MaxTries %d, want its handler's policy's 1", j.MaxTries)
	}
	runDue(t, q)
	if got := get(t, q, j.ID); got.State != litequeue.Dead {
		t.Fatalf("state %s after one failed try, want dead", got.State)
	}
}

// TestQueue_WithTimeoutDeadline checks that a handler's context reports
// the deadline WithTimeout sets, on the injected clock's timeline: the
// run's start on the mock plus the timeout. A context derived from it
// reports the same, and a handler without a timeout has no deadline.
func TestQueue_WithTimeoutDeadline(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	type reading struct {
		at      time.Time
		derived time.Time
		ok      bool
	}
	got := map[string]reading{}
	record := func(ctx context.Context, job *litequeue.Job) error {
		at, ok := ctx.Deadline()
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		derived, _ := child.Deadline()
		got[job.Kind] = reading{at, derived, ok}
		return nil
	}
	q.Handle("timed", record, litequeue.WithTimeout(5*time.Second))
	q.Handle("untimed", record)
	enqueue(t, q, "timed", nil)
	enqueue(t, q, "untimed", nil)
	clk.Add(time.Minute)
	if n := runDue(t, q); n != 2 {
		t.Fatalf("RunDue ran %d jobs, want 2", n)
	}
	want := epoch.Add(time.Minute + 5*time.Second)
	if r := got["timed"]; !r.ok || !r.at.Equal(want) || !r.derived.Equal(want) {
		t.Errorf("timed handler's Deadline() = %v, %v (derived %v); want %v, true", r.at, r.ok, r.derived, want)
	}
	if r := got["untimed"]; r.ok {
		t.Errorf("handler without a timeout: Deadline() = %v, true; want no deadline", r.at)
	}
}

// TestQueue_WithTimeoutDeadlineRealClock checks that with the real clock
// the deadline is the wall-clock one: the run's start plus the timeout.
func TestQueue_WithTimeoutDeadlineRealClock(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Clock: clock.New()})
	var at time.Time
	var ok bool
	q.Handle("timed", func(ctx context.Context, job *litequeue.Job) error {
		at, ok = ctx.Deadline()
		return nil
	}, litequeue.WithTimeout(time.Hour))
	enqueue(t, q, "timed", nil)
	before := time.Now()
	runDue(t, q)
	after := time.Now()
	if !ok || at.Before(before.Add(time.Hour)) || at.After(after.Add(time.Hour)) {
		t.Fatalf("Deadline() = %v, %v; want between %v and %v", at, ok, before.Add(time.Hour), after.Add(time.Hour))
	}
}

// TestQueue_Panic records a panicking handler as panicked, with the stack,
// and retries it.
func TestQueue_Panic(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Retry: fixedPolicy})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		var none []int
		return fmt.Errorf("unreachable: %d", none[job.Attempt]) // index out of range
	})
	job := enqueue(t, q, "k", nil)
	runDue(t, q)
	h := history(t, q, job.ID)
	if len(h) != 1 || h[0].Outcome != litequeue.OutcomePanicked || h[0].Delay != 10*time.Second {
		t.Fatalf("history = %+v, want one panicked row with a 10s delay", h)
	}
	if !strings.Contains(h[0].Error, "index out of range [1] with length 0") || !strings.Contains(h[0].Error, "handler_test.go") {
		t.Errorf("error %q lacks the panic value or the stack", h[0].Error)
	}
	if h[0].ErrorClass != "runtime.boundsError" {
		t.Errorf("error class %q, want runtime.boundsError", h[0].ErrorClass)
	}
	if got := get(t, q, job.ID).State; got != litequeue.Pending {
		t.Fatalf("state = %s, want pending (retry)", got)
	}
}

// TestQueue_PanicWithError panics with a wrapped error: the ErrorClass is
// that of the innermost error, as for one returned.
func TestQueue_PanicWithError(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Retry: fixedPolicy})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		panic(fmt.Errorf("fetch: %w", &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}))
	})
	job := enqueue(t, q, "k", nil)
	runDue(t, q)
	if h := history(t, q, job.ID); len(h) != 1 || h[0].ErrorClass != "*errors.errorString" {
		t.Fatalf("history = %+v, want one row of class *errors.errorString (fs.ErrNotExist)", h)
	}
}

// TestQueue_Timeout runs a handler that ignores its context past its
// timeout on the mock clock: the run is timed_out at once, RunDue returns,
// and the handler's late success changes nothing.
func TestQueue_Timeout(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	g := newGate()
	returned := make(chan error, 1)
	var sawCancel bool
	q.Handle("slow", func(ctx context.Context, job *litequeue.Job) error {
		g.handle(ctx, job)
		sawCancel = ctx.Err() != nil
		returned <- nil
		return nil
	}, litequeue.WithTimeout(time.Minute))
	job := enqueue(t, q, "slow", nil)

	done := runDueAsync(q)
	<-g.started
	clk.Add(59 * time.Second)
	select {
	case <-done:
		t.Fatal("RunDue returned before the timeout")
	default:
	}
	clk.Add(time.Second)
	if r := <-done; r.n != 1 || r.err != nil {
		t.Fatalf("RunDue = %d, %v; want 1 run (a timed-out run counts)", r.n, r.err)
	}
	close(g.release)
	<-returned
	if !sawCancel {
		t.Error("the handler's context was not cancelled at the timeout")
	}
	got := get(t, q, job.ID)
	h := history(t, q, job.ID)
	if got.State != litequeue.Pending || len(h) != 1 || h[0].Outcome != litequeue.OutcomeTimedOut ||
		!h[0].FinishedAt.Equal(epoch.Add(time.Minute)) || h[0].Delay != 10*time.Second {
		t.Fatalf("job %s, history %+v; want pending after one timed_out row at +1m with a 10s delay", got.State, h)
	}
	if !got.RunAt.Equal(epoch.Add(70 * time.Second)) {
		t.Fatalf("RunAt = %v, want end of timeout + 10s", got.RunAt)
	}
}

// TestQueue_JSONBadPayload sends a payload that does not decode to dead at
// once, with the decode error in the history.
func TestQueue_JSONBadPayload(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	called := false
	q.Handle("email", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, args struct{ To string }) error {
		called = true
		return nil
	}))
	job := enqueue(t, q, "email", []byte(`{"To": 42}`))
	good := enqueue(t, q, "email", map[string]string{"To": "a@b.c"})
	runDue(t, q)
	if got := get(t, q, job.ID); got.State != litequeue.Dead || got.Attempt != 1 {
		t.Fatalf("bad payload: state %s attempt %d, want dead after 1", got.State, got.Attempt)
	}
	if h := history(t, q, job.ID); !strings.Contains(h[0].Error, "cannot unmarshal") {
		t.Errorf("history error %q lacks the decode error", h[0].Error)
	}
	if got := get(t, q, good.ID).State; got != litequeue.Completed || !called {
		t.Fatalf("good payload: state %s, called %v", got, called)
	}
}
