package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// checkpoint is "proc checkpoint DB": the other process of the checkpoint
// test (checkpoint_test.go). On the real clock it handles kind "upload"
// and calls RunDue once: the handler prints "resume CHECKPOINT" (or
// "resume none"), saves the checkpoints 1, 2 and 3, printing "saved N"
// once each Checkpoint returned, and then waits to be killed.
func checkpoint(ctx context.Context, q *litequeue.Queue) error {
	q.Handle("upload", func(ctx context.Context, job *litequeue.Job) error {
		from := "none"
		if job.Checkpoint != nil {
			from = string(job.Checkpoint)
		}
		fmt.Println("resume", from)
		for part := 1; part <= 3; part++ {
			if err := litequeue.Checkpoint(ctx, part); err != nil {
				return err
			}
			fmt.Println("saved", part)
		}
		<-ctx.Done()
		return ctx.Err()
	})
	_, err := q.RunDue(ctx)
	return err
}
