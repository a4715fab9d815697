package postgres_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

// A worker of a fleet opens the Queue on the server whose DSN the
// deployment gives it, in a schema of litequeue's own, and works it until
// it is stopped. The Queue is the same *litequeue.Queue as on a file.
//
// This example has no output to check: it needs a server, so it is
// compiled, not run.
func ExampleOpen() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// e.g. postgres://app@db.internal:5432/app?search_path=jobs
	q, err := postgres.Open(ctx, os.Getenv("DATABASE_URL"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
		var to string
		if err := job.Decode(&to); err != nil {
			return litequeue.Permanent(err)
		}
		log.Printf("sending to %s", to)
		return nil
	})
	if _, err := q.Enqueue(ctx, "email.send", "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	if err := q.Work(ctx, litequeue.WorkerOptions{Concurrency: 4}); err != nil {
		log.Fatal(err)
	}
}
