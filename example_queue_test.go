package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// The README's program: open a file, handle a kind, enqueue, work.
func Example() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)

	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	done := make(chan struct{})
	q.Handle("email.welcome", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, to string) error {
		fmt.Println("welcome,", to) // a returned error would be retried with backoff
		close(done)
		return nil
	}))

	ctx, stop := context.WithCancel(context.Background())
	go q.Work(ctx, litequeue.WorkerOptions{Concurrency: 4})
	if _, err := q.Enqueue(ctx, "email.welcome", "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	<-done
	stop()
	// Output: welcome, ada@example.com
}
