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
	t.Parallel()
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

// TestQueue_StaleHolderAfterPurge plays a worker paused for longer than
// KeepFinished. Meanwhile its job was rescued, completed elsewhere and
// purged, and a new job, with a new ID (IDs are never reused), completed
// under the same token number as the paused worker's lease. When the
// paused worker wakes, its CompleteTx and its completion must still be
// refused: its job is gone.
func TestQueue_StaleHolderAfterPurge(t *testing.T) {
	t.Parallel()
	p := openPausedPair(t)
	clk2, q2 := p.clk2, p.q2
	release, stale := p.gate.release, p.stale
	old, first := p.pauseOne(t)
	defer close(release)

	clk2.Add(litequeue.DefaultVisibilityTimeout)
	runDue(t, q2) // rescues it: due again in 10s
	clk2.Add(10 * time.Second)
	if n := runDue(t, q2); n != 1 || get(t, q2, old.ID).State != litequeue.Completed {
		t.Fatalf("q2 ran %d; the job is %s, want it completed", n, get(t, q2, old.ID).State)
	}
	clk2.Add(litequeue.DefaultKeepFinished)
	runDue(t, q2) // purges it
	if exists(t, q2, old.ID) {
		t.Fatal("the completed job was not purged")
	}
	next := enqueue(t, q2, "order", nil)
	if next.ID <= old.ID {
		t.Fatalf("the new job got ID %d, not above the purged job's %d", next.ID, old.ID)
	}
	if n := runDue(t, q2); n != 1 {
		t.Fatalf("q2 ran %d, want the new job", n)
	}

	release <- struct{}{}
	if err := <-stale; !errors.Is(err, litequeue.ErrLeaseLost) {
		t.Fatalf("the paused worker's CompleteTx: %v, want ErrLeaseLost", err)
	}
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	if n, m := orders(t, q2, old.ID), orders(t, q2, next.ID); n != 1 || m != 1 {
		t.Fatalf("%d orders under ID %d and %d under %d, want 1 each: one per job", n, old.ID, m, next.ID)
	}
	if h := history(t, q2, next.ID); len(h) != 1 {
		t.Fatalf("the new job has %d history rows, want its one run: %+v", len(h), h)
	}
}

// pausedPair is two Queues on one file, each with a mock clock of its own,
// both placing orders: q1's handler waits at the gate before it places its
// order, and reports what placing it returned on stale. A paused worker
// (q1) and a live one (q2).
type pausedPair struct {
	clk1, clk2 *clock.Mock
	q1, q2     *litequeue.Queue
	gate       *gate
	stale      chan error
}

// pauseOne enqueues an order and runs it on q1 until its handler waits at
// the gate, holding the lease: the paused worker. It returns the job, and
// the channel q1's RunDue reports on once the gate is released.
func (p *pausedPair) pauseOne(t *testing.T) (*litequeue.Job, <-chan runResult) {
	t.Helper()
	j := enqueue(t, p.q1, "order", nil)
	first := runDueAsync(p.q1)
	<-p.gate.started
	return j, first
}

func openPausedPair(t *testing.T) *pausedPair {
	t.Helper()
	p := &pausedPair{clk1: newMock(), clk2: newMock(), gate: newGate(), stale: make(chan error, 1)}
	var path string
	p.q1, path = openOrders(t, litequeue.Options{Clock: p.clk1, Retry: fixedPolicy})
	p.q2 = openAt(t, path, litequeue.Options{Clock: p.clk2, Retry: fixedPolicy})
	p.q1.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		p.gate.handle(ctx, job)
		err := placeOrder(ctx, p.q1, job)
		p.stale <- err
		return err
	})
	p.q2.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		return placeOrder(ctx, p.q2, job)
	})
	return p
}

// TestQueue_StaleHolderRefused plays a paused worker: q1 claims a job and
// its clock stands still, so it never renews; q2, whose clock moves past
// the lease, rescues the job and runs it to completion. When q1's handler
// finally returns, its completion is refused and changes nothing.
func TestQueue_StaleHolderRefused(t *testing.T) {
	t.Parallel()
	held := stallHolder(t, litequeue.Options{Retry: fixedPolicy})
	q1, q2, clk2, job := held.q1, held.q2, held.clk2, held.job
	var q2runs atomic.Int32
	q2.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		q2runs.Add(1)
		return nil
	})

	clk2.Add(litequeue.DefaultVisibilityTimeout) // q1's lease has expired for q2
	if n := runDue(t, q2); n != 0 {
		t.Fatalf("q2 ran %d jobs at the lease expiry, want 0: the retry waits 10s", n)
	}
	clk2.Add(10 * time.Second)
	if n := runDue(t, q2); n != 1 {
		t.Fatalf("q2 ran %d jobs after the retry delay, want 1", n)
	}
	if r := held.release(); r.n != 1 || r.err != nil {
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

// stalledHolder is a job leased by a RunDue of q1 whose handler waits at
// a gate, on q1's clock, which stands still: q1 never renews the lease,
// as a paused process would not. q2 is another Queue on the database, on
// a clock of its own, clk2, which the test moves.
type stalledHolder struct {
	q1, q2 *litequeue.Queue
	clk2   *clock.Mock
	job    *litequeue.Job
	gate   *gate
	done   <-chan runResult // q1's RunDue, once the gate opens
	once   sync.Once
	result runResult
}

// stallHolder opens q1 and q2 with opts on clocks of their own, enqueues
// a job of kind "k", which q1 handles, and returns once q1's handler has
// it. The test's end lets the handler return and waits for q1's RunDue.
func stallHolder(t *testing.T, opts litequeue.Options) *stalledHolder {
	t.Helper()
	clk1, clk2 := newMock(), newMock()
	o1, o2 := opts, opts
	o1.Clock, o2.Clock = clk1, clk2
	q1, path := openQueue(t, o1)
	h := &stalledHolder{q1: q1, q2: openAt(t, path, o2), clk2: clk2, gate: newGate()}
	q1.Handle("k", h.gate.handle)
	h.job = enqueue(t, q1, "k", nil)
	h.done = runDueAsync(q1)
	t.Cleanup(func() { h.release() })
	<-h.gate.started
	return h
}

// release lets q1's handler return, and returns what q1's RunDue did.
func (h *stalledHolder) release() runResult {
	h.once.Do(func() {
		close(h.gate.release)
		h.result = <-h.done
	})
	return h.result
}
