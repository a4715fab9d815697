package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
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
	jobs, err := q.List(tb.Context(), litequeue.Filter{State: litequeue.Completed})
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
	if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO app_orders (job_id, attempt) VALUES (?, ?)`), job.ID, job.Attempt); err != nil {
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

// holdOpen returns the channels of a WriteTx that the test holds open:
// inside, for fn to close once it runs, and released, for fn to wait on,
// closed by release or, if the test ends first, before its Queues close
// (Close waits for WriteTx to return).
func holdOpen(t *testing.T) (inside, released chan struct{}, release func()) {
	inside, released = make(chan struct{}), make(chan struct{})
	release = sync.OnceFunc(func() { close(released) })
	t.Cleanup(release)
	return inside, released, release
}

// placeOrderInWriteTx is the exactly-once pattern as the package doc
// writes it: in one WriteTx, SeenTx, the app's insert, MarkTx, CompleteTx.
func placeOrderInWriteTx(ctx context.Context, q *litequeue.Queue, job *litequeue.Job) error {
	key := "order-for-job-" + itoa(job.ID)
	return q.WriteTx(ctx, func(tx *sqlx.Tx) error {
		if ok, err := q.SeenTx(ctx, tx, key); err != nil || ok {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO app_orders (job_id, attempt) VALUES (?, ?)`), job.ID, job.Attempt); err != nil {
			return err
		}
		if err := q.MarkTx(ctx, tx, key, time.Hour); err != nil {
			return err
		}
		return q.CompleteTx(ctx, tx, job)
	})
}

// TestQueue_WriteTxExactlyOnce runs the exactly-once pattern in WriteTx
// with as many handlers at once as the queue's read pool has connections
// and twice that: every job completes with one order, and no handler fails.
func TestQueue_WriteTxExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, concurrency := range []int{4, 8} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			t.Parallel()
			runOrders(t, concurrency, 40, placeOrderInWriteTx)
		})
	}
}

// TestQueue_WriteTx checks what WriteTx commits: fn's writes if it returns
// nil; nothing, and fn's own error, if it returns one; nothing, and the
// panic going on, if it panics. The lock is free again after each.
func TestQueue_WriteTx(t *testing.T) {
	t.Parallel()
	q, _ := openOrders(t, litequeue.Options{})
	ctx := t.Context()
	insert := func(tx *sqlx.Tx, jobID int64) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO app_orders (job_id, attempt) VALUES (?, 1)`), jobID); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.WriteTx(ctx, func(tx *sqlx.Tx) error { insert(tx, 1); return nil }); err != nil {
		t.Fatalf("WriteTx: %v", err)
	}
	refused := errors.New("refused")
	if err := q.WriteTx(ctx, func(tx *sqlx.Tx) error { insert(tx, 2); return refused }); err != refused {
		t.Fatalf("WriteTx whose fn fails = %v, want fn's error itself", err)
	}
	// An error of a type that == cannot compare (a slice) comes back as it
	// is too.
	if err := q.WriteTx(ctx, func(tx *sqlx.Tx) error { insert(tx, 4); return listError{"a", "b"} }); !reflect.DeepEqual(err, listError{"a", "b"}) {
		t.Fatalf("WriteTx whose fn fails with a listError = %v, want fn's error itself", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v, want fn's panic", r)
			}
		}()
		q.WriteTx(ctx, func(tx *sqlx.Tx) error { insert(tx, 3); panic("boom") })
	}()
	for id, want := range map[int64]int{1: 1, 2: 0, 3: 0, 4: 0} {
		if got := orders(t, q, id); got != want {
			t.Errorf("job %d: %d orders, want %d", id, got, want)
		}
	}
	enqueue(t, q, "k", nil) // the write lock is free
}

// listError is an error whose values == cannot compare.
type listError []string

func (e listError) Error() string { return strings.Join(e, "; ") }

// TestQueue_WriteTxWaitsInLine holds a WriteTx open while another waits
// for its turn: the waiting one returns its context's error when the
// context ends, and an enqueue made meanwhile commits once the first ends.
func TestQueue_WriteTxWaitsInLine(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	inside, released, release := holdOpen(t)
	first := make(chan error, 1)
	go func() {
		first <- q.WriteTx(t.Context(), func(tx *sqlx.Tx) error {
			close(inside)
			<-released
			return nil
		})
	}()
	<-inside
	ctx, cancel := context.WithCancel(t.Context())
	second := make(chan error, 1)
	go func() { second <- q.WriteTx(ctx, func(tx *sqlx.Tx) error { return nil }) }()
	enqueued := make(chan error, 1)
	go func() {
		_, err := q.Enqueue(t.Context(), "k", nil)
		enqueued <- err
	}()
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting WriteTx after its context ended = %v, want context.Canceled", err)
	}
	release()
	if err := <-first; err != nil {
		t.Fatalf("first WriteTx: %v", err)
	}
	if err := <-enqueued; err != nil {
		t.Fatalf("Enqueue behind the WriteTx: %v", err)
	}
}

// TestQueue_WriteTxWaitsForItself calls, from fn, writes that wait for fn
// to end: an Enqueue and another WriteTx. Each fails with an error saying
// so after the 10s a write waits for a WriteTx, rather than hanging.
func TestQueue_WriteTxWaitsForItself(t *testing.T) {
	t.Parallel()
	for name, write := range map[string]func(ctx context.Context, q *litequeue.Queue) error{
		"Enqueue": func(ctx context.Context, q *litequeue.Queue) error {
			_, err := q.Enqueue(ctx, "k", nil)
			return err
		},
		"WriteTx": func(ctx context.Context, q *litequeue.Queue) error {
			return q.WriteTx(ctx, func(tx *sqlx.Tx) error { return nil })
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q, _ := openQueue(t, litequeue.Options{})
			done := make(chan error, 1)
			go func() {
				done <- q.WriteTx(t.Context(), func(tx *sqlx.Tx) error { return write(t.Context(), q) })
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "a WriteTx has held the write lock") {
					t.Fatalf("%s inside WriteTx = %v, want the error that it waits for the WriteTx", name, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s inside WriteTx still waiting after 30s", name)
			}
			enqueue(t, q, "k", nil) // the write lock is free
		})
	}
}

// TestQueue_WriteTxRefused checks WriteTx on a closed Queue and on one
// opened read-only: fn never runs.
func TestQueue_WriteTxRefused(t *testing.T) {
	fileOnly(t, "OpenReadOnly opens a file")
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	q := openAt(t, path, litequeue.Options{})
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	q.Close()
	fn := func(tx *sqlx.Tx) error {
		t.Fatal("fn ran")
		return nil
	}
	if err := q.WriteTx(t.Context(), fn); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("WriteTx after Close = %v, want ErrClosed", err)
	}
	if err := ro.WriteTx(t.Context(), fn); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Errorf("WriteTx on a read-only Queue = %v, want ErrReadOnly", err)
	}
}

// TestQueue_WriteTxNilFunc: WriteTx with a nil fn returns an error that
// says so, begins nothing, and the Queue writes on as before.
func TestQueue_WriteTxNilFunc(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return q.WriteTx(t.Context(), nil)
	}()
	if want := "litequeue: WriteTx with a nil function"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("WriteTx(ctx, nil) = %v, want an error starting %q", err, want)
	}
	if err := q.WriteTx(t.Context(), func(tx *sqlx.Tx) error { return nil }); err != nil {
		t.Errorf("WriteTx after the refusal: %v", err)
	}
	enqueue(t, q, "send", nil)
}

// TestQueue_WriteTxOutwaitsBusyTimeout holds a WriteTx of one Queue open
// past SQLite's busy timeout (10s) while a WriteTx of a second Queue on the
// same file waits, ordered by the -lock file as another process's would
// be: it waits in line and commits once the first ends, where a
// transaction begun on DB() fails with SQLITE_BUSY.
func TestQueue_WriteTxOutwaitsBusyTimeout(t *testing.T) {
	fileOnly(t, "the file's write lock, which WriteTx takes across Queues")
	t.Parallel()
	a, path := openOrders(t, litequeue.Options{})
	b := openAt(t, path, litequeue.Options{})
	ctx := t.Context()
	insert := func(jobID int64) func(tx *sqlx.Tx) error {
		return func(tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO app_orders (job_id, attempt) VALUES (?, 1)`), jobID)
			return err
		}
	}
	inside, released, release := holdOpen(t)
	first := make(chan error, 1)
	go func() {
		first <- a.WriteTx(ctx, func(tx *sqlx.Tx) error {
			close(inside)
			<-released
			return insert(1)(tx)
		})
	}()
	<-inside
	second := make(chan error, 1)
	go func() { second <- b.WriteTx(ctx, insert(2)) }()
	select {
	case err := <-second:
		t.Fatalf("the second WriteTx returned %v while the first was open", err)
	case <-time.After(11 * time.Second): // past the busy timeout
	}
	release()
	for name, c := range map[string]chan error{"first": first, "second": second} {
		if err := <-c; err != nil {
			t.Fatalf("%s WriteTx: %v", name, err)
		}
	}
	for id := range int64(2) {
		if n := orders(t, a, id+1); n != 1 {
			t.Errorf("job %d: %d orders, want 1", id+1, n)
		}
	}
}

// orders is the app's own table in the queue's file, for CompleteTx tests.
const ordersSchema = `CREATE TABLE app_orders (job_id INTEGER NOT NULL, attempt INTEGER NOT NULL)`

// openOrders opens a queue whose file also holds the app's orders table.
func openOrders(tb testing.TB, opts litequeue.Options) (*litequeue.Queue, string) {
	tb.Helper()
	q, path := openQueue(tb, opts)
	if _, err := q.DB().Exec(ordersSchema); err != nil {
		tb.Fatal(err)
	}
	return q, path
}

// orders counts the app's rows for a job.
func orders(tb testing.TB, q *litequeue.Queue, id int64) int {
	tb.Helper()
	var n int
	if err := q.DB().Get(&n, q.DB().Rebind(`SELECT COUNT(*) FROM app_orders WHERE job_id = ?`), id); err != nil {
		tb.Fatal(err)
	}
	return n
}

// placeOrder is a handler's exactly-once step: the app's write, its
// idempotency key and the job's completion in one transaction, rolled back
// if any fails.
func placeOrder(ctx context.Context, q *litequeue.Queue, job *litequeue.Job) error {
	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO app_orders (job_id, attempt) VALUES (?, ?)`), job.ID, job.Attempt); err != nil {
		return err
	}
	if err := q.MarkTx(ctx, tx, "order-for-job-"+itoa(job.ID), time.Hour); err != nil {
		return err
	}
	if err := q.CompleteTx(ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit()
}
