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

// requestIDKey is the context key of the example's request ID.
type requestIDKey struct{}

// An enqueue middleware sees every job made, whichever call makes it:
// here it copies the request ID from ctx into the job's metadata, and
// refuses a job made outside a request. The handler reads the ID back.
func ExampleQueue_UseEnqueue() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	q.UseEnqueue(func(next litequeue.Enqueuer) litequeue.Enqueuer {
		return func(ctx context.Context, job *litequeue.NewJob) error {
			id, ok := ctx.Value(requestIDKey{}).(string)
			if !ok {
				return errors.New("no request ID")
			}
			job.Metadata["request_id"] = id
			return next(ctx, job)
		}
	})
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
		fmt.Printf("sending %s for request %s\n", job.Payload, job.Metadata["request_id"])
		return nil
	})

	ctx := context.WithValue(context.Background(), requestIDKey{}, "req-42")
	if _, err := q.EnqueueMany(ctx, "email.send", []any{"ada@example.com", "alan@example.com"}); err != nil {
		log.Fatal(err)
	}
	_, err = q.Enqueue(context.Background(), "email.send", "grace@example.com")
	fmt.Println(err)
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// litequeue: enqueue email.send: no request ID
	// sending "ada@example.com" for request req-42
	// sending "alan@example.com" for request req-42
}
