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

// A graceful shutdown: once Work's context is done, it claims nothing more
// and gives running handlers ShutdownGrace to finish. A handler that
// finishes in time completes its job; the context of one still running
// after the grace is cancelled, and a job whose handler then returns is
// released, pending again, without using a try. Work returns nil.
//
// (A program uses signal.NotifyContext for the context, and a grace of
// some seconds; this one is short so that the example runs fast.)
func ExampleQueue_Work_shutdown() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	started, stopping := make(chan struct{}, 2), make(chan struct{})
	q.Handle("thumbnail", func(ctx context.Context, job *litequeue.Job) error {
		started <- struct{}{}
		<-stopping // still running when the shutdown begins; then quick to end
		return nil
	})
	q.Handle("transcode", func(ctx context.Context, job *litequeue.Job) error {
		started <- struct{}{}
		<-ctx.Done() // runs until it is told to stop
		return ctx.Err()
	})

	ctx, stop := context.WithCancel(context.Background())
	thumb, err := q.Enqueue(ctx, "thumbnail", nil)
	if err != nil {
		log.Fatal(err)
	}
	video, err := q.Enqueue(ctx, "transcode", nil)
	if err != nil {
		log.Fatal(err)
	}
	worked := make(chan error)
	go func() {
		worked <- q.Work(ctx, litequeue.WorkerOptions{Concurrency: 2, ShutdownGrace: 200 * time.Millisecond})
	}()
	<-started
	<-started
	stop() // as on SIGTERM
	close(stopping)
	fmt.Println("Work returned", <-worked)

	bg := context.Background()
	for _, id := range []int64{thumb.ID, video.ID} {
		job, _ := q.Get(bg, id)
		h, _ := q.History(bg, id)
		fmt.Printf("%s: %s, attempt %d, runs recorded: %d\n", job.Kind, job.State, job.Attempt, len(h))
	}
	// Output:
	// Work returned <nil>
	// thumbnail: completed, attempt 1, runs recorded: 1
	// transcode: pending, attempt 0, runs recorded: 0
}
