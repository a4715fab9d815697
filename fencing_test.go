package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_StaleHolderAfterPurge plays a worker paused for longer than
// KeepFinished. Meanwhile its job was rescued, completed elsewhere and
// purged, and SQLite gave its ID to a new job (it reuses the highest ID
// once that row is gone), which completed under the same token number as
// the paused worker's lease. When the paused worker wakes, its CompleteTx
// and its completion must still be refused: the lease was on another job.
func TestQueue_StaleHolderAfterPurge(t *testing.T) {
	clk1, clk2 := newMock(), newMock()
	q1, path := openOrders(t, litequeue.Options{Clock: clk1, Retry: fixedPolicy})
	q2 := openAt(t, path, litequeue.Options{Clock: clk2, Retry: fixedPolicy})
	started, release := make(chan struct{}), make(chan struct{})
	stale := make(chan error, 1)
	q1.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		close(started)
		<-release
		err := placeOrder(ctx, q1, job)
		stale <- err
		return err
	})
	q2.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		return placeOrder(ctx, q2, job)
	})
	old := enqueue(t, q1, "order", nil)
	first := runDueAsync(q1)
	<-started
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
	reused := enqueue(t, q2, "order", nil)
	if reused.ID != old.ID {
		t.Skipf("SQLite gave the new job ID %d, not the purged job's %d", reused.ID, old.ID)
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
	if n := orders(t, q2, old.ID); n != 2 {
		t.Fatalf("%d orders under ID %d, want 2: one per job", n, old.ID)
	}
	if h := history(t, q2, reused.ID); len(h) != 1 {
		t.Fatalf("the new job has %d history rows, want its one run: %+v", len(h), h)
	}
}
