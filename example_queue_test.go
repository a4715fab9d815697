package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// The README's program: open a file, handle a typed kind, enqueue, work.
func Example() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)

	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	welcome := litequeue.NewKind[Email]("email.welcome") // the kind's name and payload type, once
	done := make(chan struct{})
	welcome.Handle(q, func(ctx context.Context, job *litequeue.Job, e Email) error {
		fmt.Println("welcome,", e.To) // a returned error would be retried with backoff
		close(done)
		return nil
	})

	ctx, stop := context.WithCancel(context.Background())
	go q.Work(ctx, litequeue.WorkerOptions{Concurrency: 4})
	if _, err := welcome.Enqueue(ctx, q, Email{To: "ada@example.com"}); err != nil {
		log.Fatal(err)
	}
	<-done
	stop()
	// Output: welcome, ada@example.com
}
