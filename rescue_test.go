package litequeue_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// The TestClock tests (here, in rundue_test.go, lease_test.go and
// history_test.go) play a device whose clock jumps between operations: set
// back an hour, or forward fourteen days (a device without a hardware clock
// boots in 1970 and then syncs). docs/reliability.md describes what they
// show.

// TestQueue_ClockWentBack plays a device whose clock is set back an hour
// while a job runs and whose worker then dies: the lease, which now seems
// to end an hour and 30s ahead, is trusted for one visibility timeout from
// the moment it is seen, not for the whole hour.
func TestQueue_ClockWentBack(t *testing.T) {
	t.Parallel()
	held := stallHolder(t, litequeue.Options{Retry: fixedPolicy})
	q2, clk2, j := held.q2, held.clk2, held.job

	clk2.Set(epoch.Add(-time.Hour)) // q1 is paused; q2's clock went back
	runDue(t, q2)                   // sees the lease and cuts it to 30s from now
	clk2.Add(litequeue.DefaultVisibilityTimeout - time.Millisecond)
	runDue(t, q2)
	if got := get(t, q2, j.ID).State; got != litequeue.Running {
		t.Fatalf("state %s a millisecond before the cut lease ends, want running", got)
	}
	clk2.Add(time.Millisecond)
	runDue(t, q2)
	h := history(t, q2, j.ID)
	if len(h) != 1 || h[0].Outcome != litequeue.OutcomeLeaseExpired {
		t.Fatalf("history = %+v, want one lease_expired row", h)
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

func newOverlapHandler() *overlapHandler {
	return &overlapHandler{release: make(chan struct{}), started: make(chan struct{})}
}

// TestClock_JumpWhileRunningInProcess jumps the one clock of a process
// while its handler runs, back an hour and forward fourteen days, and runs
// RunDue again from another goroutine meanwhile. The Queue does not rescue
// a lease that it holds itself, however expired it looks: the holder is
// alive, and renews it at its next renewal. So the job runs once, not
// twice at once, and completes on its first try.
func TestClock_JumpWhileRunningInProcess(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// TestClock_ForwardWhileWorkingTwoProcesses plays two processes on one
// machine, each with a Work loop, when the machine's wall clock jumps
// fourteen days forward while one of them runs a job: the other sees the
// lease expired, but Work rescues a lease only after seeing it expired,
// unchanged, for half a VisibilityTimeout, and the live holder renews it
// before that (its timers run on). The job runs once, with no overlap.
func TestClock_ForwardWhileWorkingTwoProcesses(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	const vt = litequeue.DefaultVisibilityTimeout
	held := stallHolder(t, litequeue.Options{Retry: fixedPolicy})
	q2, clk2, j := held.q2, held.clk2, held.job
	q2.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })

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

// TestQueue_RescueLookHoldsNoRow: on PostgreSQL, a Work loop's look
// through the expired leases holds none of their rows while it only sees
// them. The live holder's renewal skips a row another transaction holds;
// after a clock jumped forward, a look that held the row would turn away
// the renewal that proves the holder alive, and the job would be rescued
// while it runs.
func TestQueue_RescueLookHoldsNoRow(t *testing.T) {
	t.Parallel()
	if !onPostgres {
		t.Skip("row locks are PostgreSQL's: the file's writers take turns")
	}
	ctx := t.Context()
	held := stallHolder(t, litequeue.Options{})
	q2, clk2, j := held.q2, held.clk2, held.job
	// q2's clock is past the lease's end; q1's stands still, so it renews
	// no more.
	clk2.Add(litequeue.DefaultVisibilityTimeout + time.Second)

	var lockErr error
	rescued, err := litequeue.RescueLook(ctx, q2, func() {
		tx, err := q2.DB().BeginTxx(ctx, nil)
		if err != nil {
			lockErr = err
			return
		}
		defer tx.Rollback()
		_, lockErr = tx.ExecContext(ctx, `SELECT id FROM litequeue_jobs WHERE id = $1 FOR UPDATE NOWAIT`, j.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rescued != 0 {
		t.Fatalf("the first look rescued %d leases; want none (a lease is rescued once seen expired for a while)", rescued)
	}
	if lockErr != nil {
		t.Errorf("while the look only saw the expired lease, its row could not be taken: %v", lockErr)
	}
	if got := get(t, q2, j.ID).State; got != litequeue.Running {
		t.Errorf("job state after the look %s; want running", got)
	}
}
