package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// An app that keeps its own tables in the queue's file enqueues inside its
// own transaction: the order and the job that confirms it are committed
// together, or neither is. A rolled-back transaction leaves no job.
func ExampleQueue_EnqueueTx() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "shop.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	db := q.DB()
	if _, err := db.Exec(`CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)`); err != nil {
		log.Fatal(err)
	}
	q.Handle("order.confirm", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, order int64) error {
		fmt.Println("confirming order", order)
		return nil
	}))

	ctx := context.Background()
	placeOrder := func(item string, fail bool) error {
		tx, err := db.BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() // after Commit, a no-op
		res, err := tx.ExecContext(ctx, `INSERT INTO orders (item) VALUES (?)`, item)
		if err != nil {
			return err
		}
		id, _ := res.LastInsertId()
		if _, err := q.EnqueueTx(ctx, tx, "order.confirm", id); err != nil {
			return err
		}
		if fail {
			return errors.New("payment declined") // rolls back the order and its job
		}
		return tx.Commit()
	}
	fmt.Println(placeOrder("teapot", false))
	fmt.Println(placeOrder("kettle", true))

	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	var orders int
	db.Get(&orders, `SELECT COUNT(*) FROM orders`)
	jobs, _ := q.List(ctx, litequeue.Filter{Kind: "order.confirm"})
	fmt.Printf("%d order, %d job\n", orders, len(jobs))
	// Output:
	// <nil>
	// payment declined
	// confirming order 1
	// 1 order, 1 job
}

// While a job with a unique key is pending or running, enqueueing the same
// key again returns that job, with Duplicate set, and adds nothing: a
// client that retries its request does not enqueue twice. Once the job has
// finished, the key is free again.
func ExampleUniqueKey() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.Handle("report.build", func(ctx context.Context, job *litequeue.Job) error { return nil })

	ctx := context.Background()
	enqueue := func() {
		job, err := q.Enqueue(ctx, "report.build", "2026-03", litequeue.UniqueKey("report:2026-03"))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("job %d, duplicate: %v\n", job.ID, job.Duplicate)
	}
	enqueue()
	enqueue() // the first is still pending
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	enqueue() // the first has completed
	// Output:
	// job 1, duplicate: false
	// job 1, duplicate: true
	// job 2, duplicate: false
}
