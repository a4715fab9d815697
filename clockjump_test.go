package litequeue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// These tests play a device whose clock jumps between operations: set back
// an hour, or forward fourteen days (a device without a hardware clock
// boots in 1970 and then syncs). docs/reliability.md describes what they
// show.

// run is one handler call: which job, which try, and when.
type run struct {
	ID      int64
	Attempt int
	At      time.Time
}

// runLog records handler calls; safe for concurrent use.
type runLog struct {
	mu   sync.Mutex
	runs []run
}

func (l *runLog) add(job *litequeue.Job, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, run{job.ID, job.Attempt, at})
}

// take returns the calls recorded since the last take.
func (l *runLog) take() []run {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.runs
	l.runs = nil
	return r
}

// jumpQueue opens a queue with fixedPolicy (3 tries, 10s apart) and the
// kinds the clock tests use, each call recorded in the log: ok succeeds,
// flaky always fails, doomed dies at once, nap snoozes an hour on its
// first call and then succeeds.
func jumpQueue(t *testing.T, clk interface{ Now() time.Time }, opts litequeue.Options) (*litequeue.Queue, *runLog) {
	t.Helper()
	opts.Retry = fixedPolicy
	q, _ := openQueue(t, opts)
	log := new(runLog)
	handle := func(kind string, fn func(job *litequeue.Job) error) {
		q.Handle(kind, func(ctx context.Context, job *litequeue.Job) error {
			log.add(job, clk.Now())
			return fn(job)
		})
	}
	handle("ok", func(*litequeue.Job) error { return nil })
	handle("flaky", func(*litequeue.Job) error { return errors.New("down") })
	handle("doomed", func(*litequeue.Job) error { return litequeue.Permanent(errors.New("doomed")) })
	napped := map[int64]bool{}
	handle("nap", func(job *litequeue.Job) error {
		if !napped[job.ID] {
			napped[job.ID] = true
			return litequeue.Snooze(time.Hour)
		}
		return nil
	})
	return q, log
}

// nextDue calls NextDue and fails the test on error.
func nextDue(t *testing.T, q *litequeue.Queue) (time.Time, bool) {
	t.Helper()
	next, ok, err := q.NextDue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return next, ok
}

// stepAll steps the clock to each NextDue and runs what is due, until
// nothing is pending, and returns how many runs each RunDue made.
func stepAll(t *testing.T, q *litequeue.Queue, clk interface{ Set(time.Time) }) []int {
	t.Helper()
	var counts []int
	for range 100 {
		next, ok := nextDue(t, q)
		if !ok {
			return counts
		}
		clk.Set(next)
		counts = append(counts, runDue(t, q))
	}
	t.Fatal("still due after 100 steps")
	return nil
}

// TestClock_BackAnHour sets the clock back an hour between operations.
// Pending jobs keep their RunAt, so a scheduled job, a retry, and even a
// job that was due but not yet run each wait an extra hour, and then run
// on their schedule, once, with their retries 10s apart as the policy
// says; a job enqueued after the jump is due at once, ahead of them.
// Finished jobs are kept until their TTL ends on the clock, an hour later
// than they would have been.
func TestClock_BackAnHour(t *testing.T) {
	clk := newMock()
	var ev events
	q, log := jumpQueue(t, clk, litequeue.Options{Clock: clk, OnEvent: ev.record})
	done := enqueue(t, q, "ok", nil)
	dead := enqueue(t, q, "doomed", nil)
	retry := enqueue(t, q, "flaky", nil)
	sched := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	if n := runDue(t, q); n != 3 {
		t.Fatalf("RunDue at epoch ran %d, want 3", n)
	}
	log.take()
	backlog := enqueue(t, q, "ok", nil) // due, not yet run

	back := epoch.Add(-time.Hour)
	clk.Set(back)
	fresh := enqueue(t, q, "ok", nil)
	if next, _ := nextDue(t, q); !next.Equal(back) {
		t.Fatalf("NextDue = %v, want the fresh job's %v", next, back)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue after the jump ran %d, want only the fresh job: the backlog is due in an hour again", n)
	}
	if next, _ := nextDue(t, q); !next.Equal(epoch) {
		t.Fatalf("NextDue = %v, want the backlog at its old RunAt %v", next, epoch)
	}
	clk.Set(epoch.Add(-time.Millisecond))
	if n := runDue(t, q); n != 0 {
		t.Fatalf("RunDue an hour after the jump ran %d, want 0: nothing is due yet", n)
	}
	log.take()
	stepAll(t, q, clk)
	want := []run{
		{backlog.ID, 1, epoch},
		{retry.ID, 2, epoch.Add(10 * time.Second)},
		{retry.ID, 3, epoch.Add(20 * time.Second)},
		{sched.ID, 1, epoch.Add(time.Hour)},
	}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Fatalf("runs after the jump (-want +got):\n%s", diff)
	}
	for id, state := range map[int64]litequeue.State{
		done.ID: litequeue.Completed, dead.ID: litequeue.Dead, retry.ID: litequeue.Dead,
		sched.ID: litequeue.Completed, fresh.ID: litequeue.Completed, backlog.ID: litequeue.Completed,
	} {
		if got := get(t, q, id).State; got != state {
			t.Errorf("job %d is %s, want %s", id, got, state)
		}
	}
	if n := ev.count("job.dead"); n != 2 {
		t.Errorf("%d job.dead events for 2 deaths", n)
	}
	// The job completed at epoch is kept until epoch+24h on the clock:
	// 25 hours after the jump.
	clk.Set(epoch.Add(litequeue.DefaultKeepFinished - time.Millisecond))
	runDue(t, q)
	if !exists(t, q, done.ID) {
		t.Fatal("a completed job was purged before KeepFinished, counted from its FinishedAt")
	}
	clk.Set(epoch.Add(litequeue.DefaultKeepFinished))
	runDue(t, q)
	if exists(t, q, done.ID) || !exists(t, q, dead.ID) {
		t.Fatal("retention after the jump: want the completed job purged, the dead one kept")
	}
}

// TestClock_ForwardFourteenDays moves the clock fourteen days ahead between
// operations. Everything scheduled in between becomes due at once and one
// RunDue runs each such job once, in priority, then RunAt, then ID order:
// a retry uses one try, not all of them — its next retry is 10s after the
// jump, as the policy says. A job scheduled beyond the jump stays
// scheduled. The janitor purges the finished and dead jobs and the keys
// whose TTL passed.
func TestClock_ForwardFourteenDays(t *testing.T) {
	clk := newMock()
	var ev events
	q, log := jumpQueue(t, clk, litequeue.Options{Clock: clk, OnEvent: ev.record})
	done := enqueue(t, q, "ok", nil)
	dead := enqueue(t, q, "doomed", nil)
	retry := enqueue(t, q, "flaky", nil)
	nap := enqueue(t, q, "nap", nil)
	inHour := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	inWeek := enqueue(t, q, "ok", nil, litequeue.Delay(7*24*time.Hour))
	urgent := enqueue(t, q, "ok", nil, litequeue.Delay(2*24*time.Hour), litequeue.Priority(5))
	later := enqueue(t, q, "ok", nil, litequeue.Delay(20*24*time.Hour))
	mark(t, q, "key", time.Hour)
	if n := runDue(t, q); n != 4 {
		t.Fatalf("RunDue at epoch ran %d, want 4", n)
	}
	log.take()

	jump := epoch.Add(14 * 24 * time.Hour)
	clk.Set(jump)
	if next, _ := nextDue(t, q); next.After(jump) {
		t.Fatalf("NextDue = %v after the jump to %v, want work due now", next, jump)
	}
	if n := runDue(t, q); n != 5 {
		t.Fatalf("RunDue after the jump ran %d, want 5: each due job once", n)
	}
	want := []run{
		{urgent.ID, 1, jump},
		{retry.ID, 2, jump},
		{nap.ID, 1, jump}, // snoozed: the same try again
		{inHour.ID, 1, jump},
		{inWeek.ID, 1, jump},
	}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Fatalf("runs after the jump (-want +got):\n%s", diff)
	}
	if got := get(t, q, retry.ID); got.State != litequeue.Pending || !got.RunAt.Equal(jump.Add(10*time.Second)) {
		t.Fatalf("retry after the jump: %s at %v, want pending at %v", got.State, got.RunAt, jump.Add(10*time.Second))
	}
	for _, id := range []int64{done.ID, dead.ID} {
		if exists(t, q, id) || historyRows(t, q, id) != 0 {
			t.Errorf("job %d or its history kept after its TTL passed in the jump", id)
		}
	}
	if seen(t, q, "key") {
		t.Error("key seen after its TTL passed in the jump")
	}

	if next, _ := nextDue(t, q); !next.Equal(jump.Add(10 * time.Second)) {
		t.Fatalf("NextDue = %v, want the retry 10s after the jump", next)
	}
	clk.Set(jump.Add(10 * time.Second))
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue 10s after the jump ran %d, want the retry's last try", n)
	}
	if got := get(t, q, retry.ID); got.State != litequeue.Dead || got.Attempt != 3 || !got.FinishedAt.Equal(jump.Add(10*time.Second)) {
		t.Fatalf("retry = %s after attempt %d at %v, want dead after 3 at %v", got.State, got.Attempt, got.FinishedAt, jump.Add(10*time.Second))
	}
	if next, _ := nextDue(t, q); !next.Equal(later.RunAt) || get(t, q, later.ID).State != litequeue.Pending {
		t.Fatalf("NextDue = %v, want the job scheduled beyond the jump, at %v", next, later.RunAt)
	}
	if n := ev.count("job.dead"); n != 2 {
		t.Errorf("%d job.dead events for 2 deaths", n)
	}
}

// TestClock_ForwardWhileRunning plays two processes on one file while a
// handler runs: the clock of the rescuer jumps fourteen days ahead, the
// holder's timers (monotonic in a real process) have not yet renewed its
// lease. The lease looks expired; the rescuer records the run as
// lease_expired and, 10s later, runs the job again while the first handler
// still runs: between processes, a forward jump past the lease makes a job
// run twice at once until the holder's next renewal (at most a third of
// VisibilityTimeout later) cancels it. Fencing keeps the effects exactly
// once: the first holder's CompleteTx and completion are refused.
func TestClock_ForwardWhileRunning(t *testing.T) {
	p := openPausedPair(t)
	clk2, q1, q2 := p.clk2, p.q1, p.q2
	release, stale := p.gate.release, p.stale
	j, first := p.pauseOne(t)

	jump := epoch.Add(14 * 24 * time.Hour)
	clk2.Set(jump)
	if n := runDue(t, q2); n != 0 {
		t.Fatalf("q2 ran %d at the jump, want 0: the rescued job waits 10s", n)
	}
	if got := get(t, q2, j.ID); got.State != litequeue.Pending || got.Attempt != 1 {
		t.Fatalf("after the jump the running job is %s (attempt %d), want pending: rescued", got.State, got.Attempt)
	}
	clk2.Add(10 * time.Second)
	if n := runDue(t, q2); n != 1 {
		t.Fatalf("q2 ran %d, want the job once more", n)
	}
	close(release)
	if err := <-stale; !errors.Is(err, litequeue.ErrLeaseLost) {
		t.Fatalf("the first holder's CompleteTx: %v, want ErrLeaseLost", err)
	}
	if r := <-first; r.err != nil || r.n != 1 {
		t.Fatalf("q1 RunDue = %d, %v", r.n, r.err)
	}
	if n := orders(t, q1, j.ID); n != 1 {
		t.Fatalf("%d orders for the job, want exactly 1", n)
	}
	if diff := cmp.Diff([]litequeue.Outcome{litequeue.OutcomeLeaseExpired, litequeue.OutcomeCompleted}, outcomes(history(t, q1, j.ID))); diff != "" {
		t.Fatalf("history outcomes (-want +got):\n%s", diff)
	}
}

// overlapHandler is a handler whose first call blocks until release is
// closed; it counts calls and notes whether two ever ran at once.
type overlapHandler struct {
	release chan struct{}
	once    sync.Once
	started chan struct{} // closed by the first call
	running atomic.Int32
	calls   atomic.Int32
	overlap atomic.Bool
}

func newOverlapHandler() *overlapHandler {
	return &overlapHandler{release: make(chan struct{}), started: make(chan struct{})}
}

// free lets the first call return; safe to call more than once.
func (h *overlapHandler) free() { h.once.Do(func() { close(h.release) }) }

func (h *overlapHandler) handle(ctx context.Context, job *litequeue.Job) error {
	if h.running.Add(1) > 1 {
		h.overlap.Store(true)
	}
	defer h.running.Add(-1)
	if h.calls.Add(1) == 1 {
		close(h.started)
		<-h.release
	}
	return nil
}

// completesOnce frees the first call, waits for the job to complete, and
// fails the test unless the handler ran once, never two at once, and the
// job's history holds one completed run.
func (h *overlapHandler) completesOnce(t *testing.T, q *litequeue.Queue, id int64) {
	t.Helper()
	h.free()
	waitFor(t, "the job to complete", func() bool { return get(t, q, id).State == litequeue.Completed })
	if h.overlap.Load() || h.calls.Load() != 1 {
		t.Fatalf("%d handler calls (overlapping: %v), want 1", h.calls.Load(), h.overlap.Load())
	}
	if hist := history(t, q, id); len(hist) != 1 || hist[0].Outcome != litequeue.OutcomeCompleted {
		t.Fatalf("history = %+v, want one completed run", hist)
	}
}

// TestClock_JumpWhileRunningInProcess jumps the one clock of a process
// while its handler runs, back an hour and forward fourteen days, and runs
// RunDue again from another goroutine meanwhile. The Queue does not rescue
// a lease that it holds itself, however expired it looks: the holder is
// alive, and renews it at its next renewal. So the job runs once, not
// twice at once, and completes on its first try.
func TestClock_JumpWhileRunningInProcess(t *testing.T) {
	for _, jump := range []time.Duration{-time.Hour, 14 * 24 * time.Hour} {
		t.Run(jump.String(), func(t *testing.T) {
			clk := newMock()
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
			h := newOverlapHandler()
			q.Handle("k", h.handle)
			j := enqueue(t, q, "k", nil)
			first := runDueAsync(q)
			<-h.started
			defer h.free() // also when the test fails, so that Close can return

			clk.Set(epoch.Add(jump))
			for range 3 { // past the cut lease, the lease and the retry delay
				if n := runDue(t, q); n != 0 {
					t.Fatalf("RunDue after the jump ran the running job again (%d runs)", n)
				}
				clk.Add(litequeue.DefaultVisibilityTimeout)
			}
			h.free()
			if r := <-first; r.err != nil || r.n != 1 {
				t.Fatalf("first RunDue = %d, %v", r.n, r.err)
			}
			if h.overlap.Load() || h.calls.Load() != 1 {
				t.Fatalf("%d handler calls (overlapping: %v), want 1", h.calls.Load(), h.overlap.Load())
			}
			got := get(t, q, j.ID)
			hist := history(t, q, j.ID)
			if got.State != litequeue.Completed || got.Attempt != 1 || len(hist) != 1 {
				t.Fatalf("job %s after attempt %d with %d history rows, want completed on the first", got.State, got.Attempt, len(hist))
			}
		})
	}
}

// wallClock is a mock clock whose wall time can jump while its timers go
// on counting elapsed time, as a real process's do (Go's timers run on the
// monotonic clock): Now is the mock's time plus an offset that jump moves.
// A jump of the plain mock's Set instead fires, one by one, every timer it
// passes, and a timer set again from each firing: fourteen days of a
// worker's polls and renewals.
type wallClock struct {
	*clock.Mock
	mu     sync.Mutex
	offset time.Duration
}

func (c *wallClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Mock.Now().Add(c.offset)
}

func (c *wallClock) jump(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// TestClock_JumpWhileWorking plays a process whose wall clock jumps while
// Work runs a handler, its timers running on: back an hour and forward
// fourteen days. Work's loop looks for expired leases at each poll, and
// after the forward jump the lease its own handler holds looks expired
// until the handler's next renewal; the Queue leaves it alone, and the job
// runs once.
func TestClock_JumpWhileWorking(t *testing.T) {
	for _, jump := range []time.Duration{-time.Hour, 14 * 24 * time.Hour} {
		t.Run(jump.String(), func(t *testing.T) {
			clk := &wallClock{Mock: newMock()}
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
			h := newOverlapHandler()
			q.Handle("k", h.handle)
			stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 2})
			defer stop()
			defer h.free()
			j := enqueue(t, q, "k", nil)
			<-h.started
			clk.jump(jump)
			for range 60 { // a minute of polls: past the lease and the retry delay
				clk.Add(time.Second)
			}
			h.completesOnce(t, q, j.ID)
		})
	}
}

// TestClock_HistoryAfterBackJump replays a dead job after the clock went
// back an hour: its history lists the first death, the replay and the run
// after it in the order they happened, although the later rows carry
// earlier times.
func TestClock_HistoryAfterBackJump(t *testing.T) {
	clk := newMock()
	q, _ := jumpQueue(t, clk, litequeue.Options{Clock: clk})
	j := enqueue(t, q, "doomed", nil)
	runDue(t, q)
	clk.Set(epoch.Add(-time.Hour))
	if err := q.Replay(context.Background(), j.ID); err != nil {
		t.Fatal(err)
	}
	runDue(t, q)
	want := []litequeue.Outcome{litequeue.OutcomeFailed, litequeue.OutcomeReplayed, litequeue.OutcomeFailed}
	if diff := cmp.Diff(want, outcomes(history(t, q, j.ID))); diff != "" {
		t.Fatalf("history outcomes (-want +got):\n%s", diff)
	}
}

// TestClock_ForwardWhileWorkingTwoProcesses plays two processes on one
// machine, each with a Work loop, when the machine's wall clock jumps
// fourteen days forward while one of them runs a job: the other sees the
// lease expired, but Work rescues a lease only after seeing it expired,
// unchanged, for half a VisibilityTimeout, and the live holder renews it
// before that (its timers run on). The job runs once, with no overlap.
func TestClock_ForwardWhileWorkingTwoProcesses(t *testing.T) {
	clk := &wallClock{Mock: newMock()}
	q1, path := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	q2 := openAt(t, path, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	h := newOverlapHandler()
	q1.Handle("k", h.handle)
	q2.Handle("k", h.handle)
	for i, q := range []*litequeue.Queue{q1, q2} {
		stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 2, Name: "w" + itoa(int64(i+1))})
		defer stop()
	}
	defer h.free() // first: the loops stop only once their handlers return
	j := enqueue(t, q1, "k", nil)
	<-h.started
	clk.jump(14 * 24 * time.Hour)
	renewEvery := litequeue.DefaultVisibilityTimeout / 3
	for step := time.Second; step <= 2*time.Minute; step += time.Second {
		clk.Add(time.Second) // one poll of each loop
		if step%renewEvery == 0 {
			waitFor(t, "the holder to renew its lease", func() bool {
				return leaseUntil(t, q1, j.ID).After(clk.Now())
			})
		}
	}
	h.completesOnce(t, q1, j.ID)
}

// TestClock_WorkRescuesAfterConfirming plays a paused holder (its clock
// stands still, so it never renews) and a Work loop in another process:
// Work rescues the lease once it has seen it expired for half a
// VisibilityTimeout, not before, and then runs the job.
func TestClock_WorkRescuesAfterConfirming(t *testing.T) {
	const vt = litequeue.DefaultVisibilityTimeout
	clk1, clk2 := newMock(), newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk1, Retry: fixedPolicy})
	q2 := openAt(t, path, litequeue.Options{Clock: clk2, Retry: fixedPolicy})
	g := newGate()
	q1.Handle("k", g.handle)
	q2.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	j := enqueue(t, q1, "k", nil)
	done := runDueAsync(q1)
	defer func() {
		close(g.release)
		<-done
	}()
	<-g.started

	stop := startWork(t, q2, litequeue.WorkerOptions{})
	defer stop()
	expired := func() bool {
		for _, a := range history(t, q2, j.ID) {
			if a.Outcome == litequeue.OutcomeLeaseExpired {
				return true
			}
		}
		return false
	}
	// Second by second to the lease's end and through most of the wait:
	// each step is a poll of the loop.
	for at := time.Second; at < vt+vt/2; at += time.Second {
		clk2.Add(time.Second)
		if expired() {
			t.Fatalf("Work rescued the lease %v after it began, before %v", at, vt+vt/2)
		}
	}
	waitFor(t, "Work to rescue the lease and run the job", func() bool {
		if get(t, q2, j.ID).State == litequeue.Completed {
			return true
		}
		clk2.Add(time.Second)
		return false
	})
	if !expired() {
		t.Fatal("the job completed without a lease_expired row")
	}
}
