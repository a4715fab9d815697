package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// A handler that writes to the queue's own file makes its check, its
// write, its idempotency key and the job's completion one commit, in
// WriteTx: if the process dies before the commit, nothing of the run is
// kept and the job runs again; once it commits, the job is completed and
// never runs again. The key also stops a second job for the same order — a
// client that enqueued twice — from charging it again.
func ExampleQueue_WriteTx() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "shop.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	db := q.DB()
	if _, err := db.Exec(`CREATE TABLE receipts (order_id INTEGER, cents INTEGER)`); err != nil {
		log.Fatal(err)
	}

	type charge struct {
		Order int64 `json:"order"`
		Cents int64 `json:"cents"`
	}
	q.Handle("order.charge", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, c charge) error {
		key := fmt.Sprintf("order.charge:%d", c.Order)
		// WriteTx holds the write lock from BEGIN to COMMIT, so no other
		// writer can mark the key between SeenTx and MarkTx.
		charged := false
		err := q.WriteTx(ctx, func(tx *sqlx.Tx) error {
			if seen, err := q.SeenTx(ctx, tx, key); err != nil || seen {
				return err // nil: the job completes
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO receipts VALUES (?, ?)`, c.Order, c.Cents); err != nil {
				return err
			}
			if err := q.MarkTx(ctx, tx, key, 30*24*time.Hour); err != nil {
				return err
			}
			if err := q.CompleteTx(ctx, tx, job); err != nil {
				return err // ErrLeaseLost: another worker has the job now
			}
			charged = true
			return nil // WriteTx commits
		})
		switch {
		case err != nil:
			return err
		case charged:
			fmt.Printf("job %d: charged order %d\n", job.ID, c.Order)
		default:
			fmt.Printf("job %d: order %d already charged\n", job.ID, c.Order)
		}
		return nil
	}))

	ctx := context.Background()
	for range 2 {
		if _, err := q.Enqueue(ctx, "order.charge", charge{Order: 42, Cents: 1999}); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	var receipts int
	if err := db.Get(&receipts, `SELECT COUNT(*) FROM receipts`); err != nil {
		log.Fatal(err)
	}
	completed, _ := q.List(ctx, litequeue.Filter{State: litequeue.Completed})
	fmt.Printf("%d receipt, %d jobs completed\n", receipts, len(completed))
	// Output:
	// job 1: charged order 42
	// job 2: order 42 already charged
	// 1 receipt, 2 jobs completed
}

// A handler whose effect lies outside the file — an e-mail, a call to
// another service — cannot commit it with the job, so it asks Seen before
// the effect and Marks after it: a job that runs twice, because its worker
// died between the two, repeats the effect only if the worker died in that
// window. Keys expire after their time to live, on the injected clock.
func ExampleQueue_Mark() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	ctx := context.Background()
	key := "receipt-mail:order-42"
	send := func() {
		seen, err := q.Seen(ctx, key)
		if err != nil {
			log.Fatal(err)
		}
		if seen {
			fmt.Println("already sent")
			return
		}
		fmt.Println("sending the receipt")
		if err := q.Mark(ctx, key, 24*time.Hour); err != nil {
			log.Fatal(err)
		}
	}
	send()
	send()
	clk.Add(25 * time.Hour) // the key has expired
	send()
	// Output:
	// sending the receipt
	// already sent
	// sending the receipt
}
