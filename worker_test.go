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
	t.Parallel()
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
	t.Parallel()
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

// TestWork_ClockStepsWhileArming steps the mock clock to, or past, a job's
// due time at the worst moment: after Work has read the time to work out
// its wait, and before it arms its timer (a clock whose Timer steps
// first). A timer armed for the wait as read would end that step late, and
// with the clock held still, never; Work arms for the due time itself and
// runs the job without the clock moving again — and without moving it
// back, as a mock's timer armed for a negative wait would.
func TestWork_ClockStepsWhileArming(t *testing.T) {
	t.Parallel()
	const wait = 500 * time.Millisecond // under pollInterval: Work waits for the job itself
	for _, step := range []time.Duration{wait, 3 * wait} {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			clk := &stepOnArm{Mock: newMock()}
			q, _ := openQueue(t, litequeue.Options{Clock: clk})
			ran := make(chan int64, 1)
			q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				ran <- job.ID
				return nil
			})
			j := enqueue(t, q, "k", nil, litequeue.Delay(wait))
			clk.step.Store(int64(step))
			stop := startWork(t, q, litequeue.WorkerOptions{})
			defer stop()
			select {
			case got := <-ran:
				if got != j.ID {
					t.Fatalf("ran job %d, want %d", got, j.ID)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("job %d, due at %v, did not run with the clock held at %v (stepped: %v)",
					j.ID, j.RunAt, clk.Now(), clk.step.Load() == 0)
			}
			if got, want := clk.Now(), epoch.Add(step); !got.Equal(want) {
				t.Errorf("the clock reads %v, want %v: Work moved it", got, want)
			}
		})
	}
}

// stepOnArm is a mock clock that steps by step (once) at the next call of
// Timer, before arming it.
type stepOnArm struct {
	*clock.Mock
	step atomic.Int64 // a time.Duration
}

func (c *stepOnArm) Timer(d time.Duration) *clock.Timer {
	if s := c.step.Swap(0); s != 0 {
		c.Mock.Add(time.Duration(s))
	}
	return c.Mock.Timer(d)
}

// TestWork_ShutdownReleases cancels Work while a handler runs: after the
// grace the handler's context is cancelled, and the job, whose handler
// returned, is released without using a try, whatever the handler
// returned: its context's error, nil, or a snooze.
func TestWork_ShutdownReleases(t *testing.T) {
	t.Parallel()
	for name, returns := range map[string]func(ctx context.Context) error{
		"its context's error": context.Cause,
		"nil":                 func(context.Context) error { return nil },
		"a snooze":            func(context.Context) error { return litequeue.Snooze(time.Minute) },
	} {
		t.Run(name, func(t *testing.T) { testShutdownReleases(t, returns) })
	}
}

func testShutdownReleases(t *testing.T, returns func(ctx context.Context) error) {
	clk := newTimerClock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
	started, stopped := make(chan struct{}), make(chan struct{})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		close(started)
		<-ctx.Done()
		close(stopped)
		return returns(ctx)
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, litequeue.WorkerOptions{ShutdownGrace: 10 * time.Second}) }()
	job := enqueue(t, q, "k", nil)
	<-started
	from := clk.mark()
	cancel()
	// Run the grace out, and no further: the handler returns at once, and
	// Work, its clock standing still, must wait for that rather than
	// abandon it.
	runOut(t, clk, from, 10*time.Second)
	waitClosed(t, "the grace to run out", stopped)
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

// TestWork_ReleaseWakesLoops stops one of two Work loops of a Queue while
// it runs a job: released at the end of the shutdown grace, the job is
// pending again, and its commit wakes the other loop, idle, which takes it
// while the clock stands still, so that no poll comes. A write that makes
// a job pending wakes the Queue's idle loops in-process, as PostgreSQL's
// trigger tells of it: on the file, with its notifications and without (a
// Work that polls, where they do not run).
func TestWork_ReleaseWakesLoops(t *testing.T) {
	t.Parallel()
	opts := litequeue.Options{VisibilityTimeout: time.Hour}
	forWatches(t, opts, time.Hour, func(t *testing.T, q *litequeue.Queue, clk *timerClock) { // no poll while the clock steps
		started, stopped := make(chan struct{}), make(chan struct{})
		var runs atomic.Int32
		q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
			if runs.Add(1) == 1 {
				close(started)
				<-ctx.Done()
				close(stopped)
				return ctx.Err()
			}
			return nil
		})
		job := enqueue(t, q, "k", nil, litequeue.OnQueue("one"))
		stopFirst := startWork(t, q, litequeue.WorkerOptions{Queues: []string{"one"}, ShutdownGrace: time.Second})
		<-started
		stopSecond := startIdleLoop(t, q, "one", "two")
		defer stopSecond()
		firstDone, from := make(chan error, 1), clk.mark()
		go func() { firstDone <- stopFirst() }()
		runOut(t, clk, from, time.Second)
		waitClosed(t, "the first loop's grace to run out", stopped)
		if err := <-firstDone; err != nil {
			t.Fatalf("the first loop's Work returned %v", err)
		}
		waitFor(t, "the second loop to run the released job", func() bool { return get(t, q, job.ID).State == litequeue.Completed })
		if got := runs.Load(); got != 2 {
			t.Fatalf("the job ran %d times, want 2: released once, then completed", got)
		}
	})
}

// TestWork_NoLeakAfterClose opens, works and closes a queue, then checks
// that no goroutine of litequeue's is left.
func TestWork_NoLeakAfterClose(t *testing.T) {
	// Not parallel: goleak sees every goroutine of the process.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	q, _ := openQueue(t, litequeue.Options{Clock: clock.New()})
	var wg sync.WaitGroup
	wg.Add(10)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		wg.Done()
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- q.Work(t.Context(), litequeue.WorkerOptions{Concurrency: 3}) }()
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
	t.Parallel()
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
		jobs, err := q1.List(t.Context(), litequeue.Filter{State: litequeue.Completed})
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

// TestWork_StopsQuietly stops Work at many moments of a busy drain, so that
// some stops cut a claim short: that is no error, and none is logged.
func TestWork_StopsQuietly(t *testing.T) {
	t.Parallel()
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
		if _, err := q.EnqueueMany(t.Context(), "k", make([]any, 100)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
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
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for _, tt := range []struct {
		opts litequeue.WorkerOptions
		want string
	}{
		{litequeue.WorkerOptions{Concurrency: -1}, "litequeue: work: Concurrency -1 is negative"},
		{litequeue.WorkerOptions{ShutdownGrace: -time.Second}, "litequeue: work: ShutdownGrace -1s is negative"},
	} {
		if err := q.Work(t.Context(), tt.opts); err == nil || err.Error() != tt.want {
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

// slowJobs is a handler for jobs that block until the test releases them,
// and that counts how many run at once and which have started.
type slowJobs struct {
	mu      sync.Mutex
	running int
	most    int
	started map[int64]bool
	release chan struct{}
	done    sync.Once
}

// finish lets every job return, now and from now on.
func (s *slowJobs) finish() { s.done.Do(func() { close(s.release) }) }

func (s *slowJobs) handle(ctx context.Context, job *litequeue.Job) error {
	s.mu.Lock()
	s.running++
	s.most = max(s.most, s.running)
	s.started[job.ID] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
	}()
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// state returns how many handlers run now, the most that ever ran at once,
// and whether the job's handler has started.
func (s *slowJobs) state(id int64) (running, most int, started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.most, s.started[id]
}

// newSlowJobs returns the handler; the test's end releases its jobs, before
// the Queue closes.
func newSlowJobs(tb testing.TB) *slowJobs {
	s := &slowJobs{started: make(map[int64]bool), release: make(chan struct{})}
	tb.Cleanup(s.finish)
	return s
}

// listState lists the jobs in one state.
func listState(tb testing.TB, q *litequeue.Queue, state litequeue.State) []*litequeue.Job {
	tb.Helper()
	jobs, err := q.List(tb.Context(), litequeue.Filter{State: state})
	if err != nil {
		tb.Fatal(err)
	}
	return jobs
}

// TestWork_LeasesAheadForShortHandlers: once its handlers prove short, Work
// leases up to four times Concurrency jobs, runs only Concurrency at once,
// keeps the waiting jobs' leases alive, records a Cancel of a waiting job
// without running it, and at shutdown gives the waiting jobs back without
// using a try.
func TestWork_LeasesAheadForShortHandlers(t *testing.T) {
	t.Parallel()
	const concurrency, vt = 2, 30 * time.Second
	clk := newMock()
	var ev events
	q, path := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record, VisibilityTimeout: vt})
	q.Handle("fast", func(ctx context.Context, job *litequeue.Job) error { return nil })
	slow := newSlowJobs(t)
	q.Handle("slow", slow.handle)
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: concurrency, ShutdownGrace: time.Minute})

	// The mock clock stands still: the fast handlers run for 0s.
	for range 4 {
		enqueue(t, q, "fast", nil)
	}
	waitFor(t, "the fast jobs to complete", func() bool { return ev.count("job.completed") == 4 })
	const n = 4 * concurrency
	for range n {
		enqueue(t, q, "slow", nil)
	}
	waitFor(t, "Work to lease every slow job", func() bool {
		running, _, _ := slow.state(0)
		return len(listState(t, q, litequeue.Running)) == n && running == concurrency
	})

	// A waiting job: leased, its handler not started.
	var waiting *litequeue.Job
	for _, j := range listState(t, q, litequeue.Running) {
		if _, _, started := slow.state(j.ID); !started {
			waiting = j
			break
		}
	}
	if err := q.Cancel(t.Context(), waiting.ID); err != nil {
		t.Fatal(err)
	}

	// Step the clock through two timeouts, renewal by renewal: another
	// Queue on the file (another process) finds no lease to rescue.
	other := openAt(t, path, litequeue.Options{Clock: clk})
	for step := 0; step < 6; step++ {
		clk.Add(vt / 3)
		until := clk.Now().Add(vt / 2)
		waitFor(t, "every lease to be renewed", func() bool {
			for _, j := range listState(t, q, litequeue.Running) {
				if lease := leaseUntil(t, q, j.ID); lease.Before(until) {
					return false
				}
			}
			return true
		})
		if n, err := other.RunDue(t.Context()); err != nil || n != 0 {
			t.Fatalf("another Queue's RunDue: %d runs, %v", n, err)
		}
	}
	if got := get(t, q, waiting.ID); got.State != litequeue.Cancelled {
		t.Fatalf("the cancelled waiting job is %s, want cancelled", got.State)
	}
	if _, _, started := slow.state(waiting.ID); started {
		t.Fatal("the cancelled waiting job's handler ran")
	}
	if h := history(t, q, waiting.ID); len(h) != 1 || h[0].Outcome != litequeue.OutcomeCancelled {
		t.Fatalf("history of the cancelled waiting job: %+v, want one cancelled row", h)
	}
	if got := len(listState(t, q, litequeue.Running)); got != n-1 {
		t.Fatalf("%d jobs running after two timeouts, want %d", got, n-1)
	}
	var expired int
	if err := q.DB().Get(&expired, `SELECT COUNT(*) FROM litequeue_attempts WHERE outcome = 'lease_expired'`); err != nil || expired != 0 {
		t.Fatalf("%d leases expired (%v), want none", expired, err)
	}

	// Shutdown: the running handlers finish within the grace; the jobs
	// still waiting go back as they were.
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	waitFor(t, "the waiting jobs to be given back", func() bool {
		return len(listState(t, q, litequeue.Pending)) == n-concurrency-1
	})
	slow.finish()
	if err := <-stopped; err != nil {
		t.Fatalf("Work returned %v", err)
	}
	for _, j := range listState(t, q, litequeue.Pending) {
		if j.Attempt != 0 || len(history(t, q, j.ID)) != 0 {
			t.Errorf("job %d given back with attempt %d and %d history rows, want 0 and 0", j.ID, j.Attempt, len(history(t, q, j.ID)))
		}
	}
	if got := len(listState(t, q, litequeue.Completed)); got != 4+concurrency {
		t.Errorf("%d jobs completed, want %d", got, 4+concurrency)
	}
	if _, most, _ := slow.state(0); most != concurrency {
		t.Errorf("at most %d handlers ran at once, want %d", most, concurrency)
	}
}
