package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// A process that only enqueues, with RefuseUnknownKinds, refuses a kind
// that no worker on the file has handled: a typo fails at the enqueue
// instead of waiting forever.
func ExampleOptions_refuseUnknownKinds() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.db")
	ctx := context.Background()

	worker, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer worker.Close()
	worker.Handle("email.welcome", func(ctx context.Context, job *litequeue.Job) error { return nil })
	if _, err := worker.RunDue(ctx); err != nil { // records its kinds, as Work does
		log.Fatal(err)
	}

	producer, err := litequeue.Open(path, litequeue.Options{RefuseUnknownKinds: true})
	if err != nil {
		log.Fatal(err)
	}
	defer producer.Close()
	job, err := producer.Enqueue(ctx, "email.welcome", nil)
	fmt.Println("email.welcome:", job.Kind, err)
	_, err = producer.Enqueue(ctx, "email.sned", nil)
	fmt.Println("email.sned:", errors.Is(err, litequeue.ErrUnknownKind))
	fmt.Println(err)
	// Output:
	// email.welcome: email.welcome <nil>
	// email.sned: true
	// litequeue: enqueue email.sned: kind "email.sned" has never been handled by a Work or RunDue on this database; handle it, or enqueue without Options.RefuseUnknownKinds
}

// Handled lists the kinds this Queue runs; one that only enqueues, as a
// web server that hands work to workers does, runs none.
func ExampleQueue_Handled() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	fmt.Println(q.Handled())
	q.Handle("pdf.render", func(ctx context.Context, job *litequeue.Job) error { return nil })
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error { return nil })
	fmt.Println(q.Handled())
	// Output:
	// []
	// [email.send pdf.render]
}
