package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// Workers lists the Work loops at work on the database, of every process:
// each records itself when it starts and every minute, and deletes its
// record when Work returns.
func ExampleQueue_Workers() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error { return nil })

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Work(ctx, litequeue.WorkerOptions{Queues: []string{"emails"}, Concurrency: 4, Name: "mailer"})
	}()
	var workers []litequeue.WorkerInfo
	for deadline := time.Now().Add(10 * time.Second); len(workers) == 0; { // until the loop has recorded itself
		if workers, err = q.Workers(context.Background()); err != nil {
			log.Fatal(err)
		}
		if time.Now().After(deadline) {
			log.Fatal("the Work loop did not record itself in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, w := range workers {
		fmt.Println(w.Name, w.Queues, w.Kinds, w.Concurrency, w.Running, w.LastSeen.UTC().Format(time.RFC3339), w.Silent)
	}

	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	workers, err = q.Workers(context.Background())
	fmt.Println(len(workers), "workers after Work returned", err)
	// Output:
	// mailer [emails] [email.send] 4 0 2026-03-01T09:00:00Z false
	// 0 workers after Work returned <nil>
}
