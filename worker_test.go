package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/litequeue/litequeue"
)

// TestWork_RetriesUntilSuccess lets Work run a job that fails twice and
// then succeeds, as the test advances the mock clock.
func TestWork_RetriesUntilSuccess(t *testing.T) {
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	var calls atomic.Int32
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if calls.Add(1) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 2, Name: "w1"})
	job := enqueue(t, q, "k", nil)
	waitFor(t, "the job to complete", func() bool {
		if get(t, q, job.ID).State == litequeue.Completed {
			return true
		}
		clk.Add(time.Second)
		return false
	})
	if err := stop(); err != nil {
		t.Fatalf("Work returned %v, want nil", err)
	}
	h := history(t, q, job.ID)
	for i, a := range h {
		if a.Worker != "w1" {
			t.Errorf("row %d: worker %q, want w1", i, a.Worker)
		}
		if i > 0 && a.StartedAt.Before(h[i-1].FinishedAt.Add(h[i-1].Delay)) {
			t.Errorf("run %d started at %v, before its RunAt", i+1, a.StartedAt)
		}
	}
	want := []litequeue.Outcome{litequeue.OutcomeFailed, litequeue.OutcomeFailed, litequeue.OutcomeCompleted}
	if diff := cmp.Diff(want, outcomes(h)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
}

// TestWork_WakesOnEnqueue shows that an idle worker picks up an in-process
// enqueue at once, without the clock moving.
func TestWork_WakesOnEnqueue(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{})
	ran := make(chan int64, 1)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		ran <- job.ID
		return nil
	})
	stop := startWork(t, q, litequeue.WorkerOptions{})
	defer stop()
	j := enqueue(t, q, "k", nil)
	if got := <-ran; got != j.ID {
		t.Fatalf("ran job %d, want %d", got, j.ID)
	}
}

// TestWork_ShutdownReleases cancels Work while a handler runs: after the
// grace the handler's context is cancelled, and the job, whose handler
// returned, is released without using a try, whatever the handler
// returned: its context's error, nil, or a snooze.
func TestWork_ShutdownReleases(t *testing.T) {
	for name, returns := range map[string]func(ctx context.Context) error{
		"its context's error": context.Cause,
		"nil":                 func(context.Context) error { return nil },
		"a snooze":            func(context.Context) error { return litequeue.Snooze(time.Minute) },
	} {
		t.Run(name, func(t *testing.T) { testShutdownReleases(t, returns) })
	}
}

func testShutdownReleases(t *testing.T, returns func(ctx context.Context) error) {
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
	started, stopped := make(chan struct{}), make(chan struct{})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		close(started)
		<-ctx.Done()
		close(stopped)
		return returns(ctx)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, litequeue.WorkerOptions{ShutdownGrace: 10 * time.Second}) }()
	job := enqueue(t, q, "k", nil)
	<-started
	cancel()
	// Step the clock through the grace until the handler's context is
	// cancelled, and no further: the handler returns at once, and Work,
	// its clock standing still, must wait for that rather than abandon it.
	// Small steps: the release window (5s) stays far.
	stepUntilClosed(t, clk, "the grace to run out", stopped, 100*time.Millisecond)
	if err := <-done; err != nil {
		t.Fatalf("Work returned %v", err)
	}
	got := get(t, q, job.ID)
	if got.State != litequeue.Pending || got.Attempt != 0 {
		t.Fatalf("job: state %s attempt %d, want pending with no try used", got.State, got.Attempt)
	}
	if h := history(t, q, job.ID); len(h) != 0 {
		t.Fatalf("history = %+v, want none for a released run", h)
	}
}

// TestWork_NoLeakAfterClose opens, works and closes a queue, then checks
// that no goroutine of litequeue's is left.
func TestWork_NoLeakAfterClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	q, _ := openQueue(t, litequeue.Options{Clock: clock.New()})
	var wg sync.WaitGroup
	wg.Add(10)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		wg.Done()
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- q.Work(context.Background(), litequeue.WorkerOptions{Concurrency: 3}) }()
	for range 10 {
		enqueue(t, q, "k", nil)
	}
	wg.Wait()
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Work after Close returned %v, want nil", err)
	}
}

// TestWork_TwoQueuesOneFile runs workers of two Queues on one file: every
// job runs exactly once.
func TestWork_TwoQueuesOneFile(t *testing.T) {
	opts := litequeue.Options{Clock: clock.New()}
	q1, path := openQueue(t, opts)
	q2 := openAt(t, path, opts)
	const n = 300
	var mu sync.Mutex
	runs := map[int64]int{}
	handler := func(ctx context.Context, job *litequeue.Job) error {
		mu.Lock()
		runs[job.ID]++
		mu.Unlock()
		return nil
	}
	q1.Handle("k", handler)
	q2.Handle("k", handler)
	stop1 := startWork(t, q1, litequeue.WorkerOptions{Concurrency: 4, Name: "one"})
	stop2 := startWork(t, q2, litequeue.WorkerOptions{Concurrency: 4, Name: "two"})
	var wg sync.WaitGroup
	for _, q := range []*litequeue.Queue{q1, q2} {
		wg.Go(func() {
			for range n / 2 {
				enqueue(t, q, "k", nil)
			}
		})
	}
	wg.Wait()
	waitFor(t, "every job to complete", func() bool {
		jobs, err := q1.List(context.Background(), litequeue.Filter{State: litequeue.Completed})
		return err == nil && len(jobs) == n
	})
	stop1()
	stop2()
	mu.Lock()
	defer mu.Unlock()
	for id, c := range runs {
		if c != 1 {
			t.Errorf("job %d ran %d times", id, c)
		}
	}
	if len(runs) != n {
		t.Fatalf("%d jobs ran, want %d", len(runs), n)
	}
}

// TestQueue_StaleHolderRefused plays a paused worker: q1 claims a job and
// its clock stands still, so it never renews; q2, whose clock moves past
// the lease, rescues the job and runs it to completion. When q1's handler
// finally returns, its completion is refused and changes nothing.
func TestQueue_StaleHolderRefused(t *testing.T) {
	clk1, clk2 := newMock(), newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk1, Retry: fixedPolicy})
	q2 := openAt(t, path, litequeue.Options{Clock: clk2, Retry: fixedPolicy})
	g := newGate()
	q1.Handle("k", g.handle)
	var q2runs atomic.Int32
	q2.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		q2runs.Add(1)
		return nil
	})
	job := enqueue(t, q1, "k", nil)
	done := runDueAsync(q1)
	<-g.started

	clk2.Add(litequeue.DefaultVisibilityTimeout) // q1's lease has expired for q2
	if n := runDue(t, q2); n != 0 {
		t.Fatalf("q2 ran %d jobs at the lease expiry, want 0: the retry waits 10s", n)
	}
	clk2.Add(10 * time.Second)
	if n := runDue(t, q2); n != 1 {
		t.Fatalf("q2 ran %d jobs after the retry delay, want 1", n)
	}
	close(g.release)
	if r := <-done; r.n != 1 || r.err != nil {
		t.Fatalf("q1 RunDue = %d, %v; want 1 run, its result refused quietly", r.n, r.err)
	}
	got := get(t, q1, job.ID)
	if got.State != litequeue.Completed || got.Attempt != 2 || q2runs.Load() != 1 {
		t.Fatalf("job %s attempt %d, q2 runs %d; want completed once by q2 on attempt 2", got.State, got.Attempt, q2runs.Load())
	}
	h := history(t, q1, job.ID)
	if len(h) != 2 || h[0].Outcome != litequeue.OutcomeLeaseExpired || h[1].Outcome != litequeue.OutcomeCompleted {
		t.Fatalf("history = %+v, want lease_expired then completed", h)
	}
	want := litequeue.Attempt{
		Attempt: 1, StartedAt: epoch, FinishedAt: epoch.Add(litequeue.DefaultVisibilityTimeout),
		Outcome: litequeue.OutcomeLeaseExpired, Error: h[0].Error, Delay: 10 * time.Second, Worker: h[1].Worker,
	}
	if diff := cmp.Diff(want, h[0]); diff != "" {
		t.Fatalf("lease_expired row (-want +got):\n%s", diff)
	}
}

// TestWork_StopsQuietly stops Work at many moments of a busy drain, so that
// some stops cut a claim short: that is no error, and none is logged.
func TestWork_StopsQuietly(t *testing.T) {
	var logged errorLog
	q, _ := openQueue(t, litequeue.Options{Logger: slog.New(&logged)})
	var runs atomic.Int32
	var stop atomic.Pointer[context.CancelFunc]
	target := atomic.Int32{}
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if runs.Add(1) == target.Load() {
			(*stop.Load())()
		}
		return nil
	})
	for round := range 40 {
		if _, err := q.EnqueueMany(context.Background(), "k", make([]any, 100)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stop.Store(&cancel)
		runs.Store(0)
		target.Store(int32(1 + round%25))
		if err := q.Work(ctx, litequeue.WorkerOptions{Concurrency: 8}); err != nil {
			t.Fatalf("round %d: Work = %v", round, err)
		}
		cancel()
	}
	if errs := logged.errors(); len(errs) != 0 {
		t.Fatalf("Work logged errors while stopping: %q", errs)
	}
}

// errorLog is a slog.Handler that keeps the messages of errors.
type errorLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *errorLog) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelError }

func (l *errorLog) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		msg += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, msg)
	return nil
}

func (l *errorLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *errorLog) WithGroup(string) slog.Handler      { return l }

func (l *errorLog) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.msgs)
}

// TestWork_BadOptions checks that Work refuses negative options, naming
// the one at fault.
func TestWork_BadOptions(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{})
	for _, tt := range []struct {
		opts litequeue.WorkerOptions
		want string
	}{
		{litequeue.WorkerOptions{Concurrency: -1}, "litequeue: work: Concurrency -1 is negative"},
		{litequeue.WorkerOptions{ShutdownGrace: -time.Second}, "litequeue: work: ShutdownGrace -1s is negative"},
	} {
		if err := q.Work(context.Background(), tt.opts); err == nil || err.Error() != tt.want {
			t.Errorf("Work(%+v) = %v, want %q", tt.opts, err, tt.want)
		}
	}
}

// TestWork_HandleWakes registers a kind's handler while Work is idle: its
// job, enqueued before, runs at once, though nothing else is written and
// no time passes. It runs in a synctest bubble, whose fake time the real
// clock reads, so that "idle" and "at once" are exact.
func TestWork_HandleWakes(t *testing.T) {
	fileOnly(t, "a synctest bubble cannot wait on a server's connections")
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		q, _ := openQueue(t, litequeue.Options{Clock: clock.New()})
		ok := func(ctx context.Context, job *litequeue.Job) error { return nil }
		q.Handle("early", ok)
		late := enqueue(t, q, "late", nil)
		early := enqueue(t, q, "early", nil)
		stop := startWork(t, q, litequeue.WorkerOptions{})
		defer stop()
		synctest.Wait() // Work ran the early job and sleeps
		if got := get(t, q, early.ID).State; got != litequeue.Completed {
			t.Fatalf("early job %s, want completed", got)
		}
		q.Handle("late", ok)
		synctest.Wait() // no time passes: Work must wake for the new kind
		if got := get(t, q, late.ID).State; got != litequeue.Completed {
			t.Fatalf("job of a kind handled after Work started: %s, want completed", got)
		}
	})
}
