package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// A resumable upload: the handler saves a checkpoint after each part, and
// the next attempt, after a failure or a killed process, resumes from it.
func ExampleCheckpoint() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	q.Handle("upload", func(ctx context.Context, job *litequeue.Job) error {
		next := 1
		if job.Checkpoint != nil {
			if err := job.DecodeCheckpoint(&next); err != nil {
				return err
			}
		}
		fmt.Printf("attempt %d starts at part %d\n", job.Attempt, next)
		for ; next <= 4; next++ {
			if job.Attempt == 1 && next == 3 {
				return litequeue.RetryAfter(0, fmt.Errorf("part %d: connection reset", next))
			}
			if err := litequeue.Checkpoint(ctx, next+1); err != nil { // durable before it returns
				return err
			}
		}
		return nil
	})

	ctx := context.Background()
	if _, err := q.Enqueue(ctx, "upload", "video.mp4"); err != nil {
		log.Fatal(err)
	}
	for range 2 {
		if _, err := q.RunDue(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// attempt 1 starts at part 1
	// attempt 2 starts at part 3
}
