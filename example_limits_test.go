package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/litequeue/litequeue"
)

// Limits reads how much of each limit is in use: here from inside a run,
// as a monitor would while the work goes on.
func ExampleQueue_Limits() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.Handle("pdf.render", func(ctx context.Context, job *litequeue.Job) error {
		limits, err := q.Limits(ctx)
		if err != nil {
			return err
		}
		for _, l := range limits {
			fmt.Printf("%s: %d of %d running, %d of %d started in %v\n",
				l.Kind, l.Running, l.MaxRunning, l.Starts, l.RateLimit, l.RatePer)
		}
		return nil
	}, litequeue.MaxRunning(2), litequeue.RateLimit(10, time.Minute))
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, "pdf.render", nil); err != nil {
		log.Fatal(err)
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// pdf.render: 1 of 2 running, 1 of 10 started in 1m0s
}
