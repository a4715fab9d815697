package litequeue_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// handlerErrors records the errors a test's handlers returned.
type handlerErrors struct {
	mu   sync.Mutex
	errs []error
}

func (h *handlerErrors) add(err error) error {
	if err != nil {
		h.mu.Lock()
		h.errs = append(h.errs, err)
		h.mu.Unlock()
	}
	return err
}

func (h *handlerErrors) list() []error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]error(nil), h.errs...)
}

// completed counts the queue's completed jobs.
func completed(tb testing.TB, q *litequeue.Queue) int {
	tb.Helper()
	jobs, err := q.List(context.Background(), litequeue.Filter{State: litequeue.Completed})
	if err != nil {
		tb.Fatal(err)
	}
	return len(jobs)
}

// runOrders enqueues jobs "order" jobs, works them with the given
// concurrency through handle, and fails the test if a handler returned an
// error or the jobs did not all complete within 30s of real time (each
// takes a few milliseconds). Every job must have placed one order.
func runOrders(t *testing.T, concurrency, jobs int, handle func(ctx context.Context, q *litequeue.Queue, job *litequeue.Job) error) {
	t.Helper()
	q, _ := openOrders(t, litequeue.Options{})
	var errs handlerErrors
	q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		return errs.add(handle(ctx, q, job))
	})
	payloads := make([]any, jobs)
	enqueued, err := q.EnqueueMany(t.Context(), "order", payloads)
	if err != nil {
		t.Fatal(err)
	}
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: concurrency})
	waitWithin(t, 30*time.Second, "every job to complete, or a handler to fail", func() bool {
		return len(errs.list()) > 0 || completed(t, q) == jobs
	})
	if err := stop(); err != nil {
		t.Fatalf("Work: %v", err)
	}
	if errs := errs.list(); len(errs) > 0 {
		t.Fatalf("%d handler errors, the first: %v", len(errs), errs[0])
	}
	for _, j := range enqueued {
		if n := orders(t, q, j.ID); n != 1 {
			t.Errorf("job %d placed %d orders, want 1", j.ID, n)
		}
	}
}

// placeOrderOnDB is the exactly-once pattern written on DB() directly: a
// transaction, Seen, the app's insert, MarkTx, CompleteTx, commit.
func placeOrderOnDB(ctx context.Context, q *litequeue.Queue, job *litequeue.Job) error {
	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	key := "order-for-job-" + itoa(job.ID)
	if ok, err := q.Seen(ctx, key); err != nil || ok {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO app_orders (job_id, attempt) VALUES (?, ?)`, job.ID, job.Attempt); err != nil {
		return err
	}
	if err := q.MarkTx(ctx, tx, key, time.Hour); err != nil {
		return err
	}
	if err := q.CompleteTx(ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit()
}

// TestQueue_DBBesideInternalReads runs handlers that hold a transaction on
// DB() while they call Seen, as many at once as the queue's own read pool
// has connections and twice that: the app's transactions have a pool of
// their own, so Seen never waits for a connection that a transaction
// waiting for the write lock holds (which ended in SQLITE_BUSY after the
// busy timeout).
func TestQueue_DBBesideInternalReads(t *testing.T) {
	t.Parallel()
	for _, concurrency := range []int{4, 8} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			t.Parallel()
			runOrders(t, concurrency, 40, placeOrderOnDB)
		})
	}
}

var _ = sqlx.Tx{}
