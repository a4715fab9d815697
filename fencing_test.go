package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// TestQueue_StaleHolderAfterPurge plays a worker paused for longer than
// KeepFinished. Meanwhile its job was rescued, completed elsewhere and
// purged, and a new job, with a new ID (IDs are never reused), completed
// under the same token number as the paused worker's lease. When the
// paused worker wakes, its CompleteTx and its completion must still be
// refused: its job is gone.
func TestQueue_StaleHolderAfterPurge(t *testing.T) {
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
