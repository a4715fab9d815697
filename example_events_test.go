package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// OnEvent sees every state change once it has committed, one call at a
// time, before the call that caused it returns: here a job that fails once
// and then succeeds, and one that dies, which is what an alert would watch
// for. Metrics and logs hang off the same hook.
func ExampleOptions_onEvent() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	start := clk.Now()
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{
		Clock: clk,
		Rand:  func() float64 { return 0.5 },
		OnEvent: func(ev litequeue.Event) {
			fmt.Printf("+%v %-13s job %d %s", ev.At.Sub(start), ev.Type, ev.Job.ID, ev.Job.Kind)
			switch ev.Type {
			case "job.retry":
				fmt.Printf(": %s, retry in %v", ev.Err, ev.Delay)
			case "job.dead":
				fmt.Printf(": %s, ALERT", ev.Err)
			}
			fmt.Println()
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	q.Handle("backup", func(ctx context.Context, job *litequeue.Job) error {
		if job.Attempt == 1 {
			return errors.New("disk busy")
		}
		return nil
	})
	q.Handle("upload", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.Permanent(errors.New("403 forbidden"))
	})
	ctx := context.Background()
	for _, kind := range []string{"backup", "upload"} {
		if _, err := q.Enqueue(ctx, kind, nil); err != nil {
			log.Fatal(err)
		}
	}
	for range 2 {
		if _, err := q.RunDue(ctx); err != nil {
			log.Fatal(err)
		}
		clk.Add(time.Second)
	}
	// Output:
	// +0s job.enqueued  job 1 backup
	// +0s job.enqueued  job 2 upload
	// +0s job.started   job 1 backup
	// +0s job.retry     job 1 backup: disk busy, retry in 1s
	// +0s job.started   job 2 upload
	// +0s job.dead      job 2 upload: 403 forbidden, ALERT
	// +1s job.started   job 1 backup
	// +1s job.completed job 1 backup
}
