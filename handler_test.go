package litequeue_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// TestQueue_HandlePanics checks the set-up mistakes Handle refuses.
func TestQueue_HandlePanics(t *testing.T) {
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
