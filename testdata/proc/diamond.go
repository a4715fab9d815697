package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/litequeue/litequeue"
)

// diamond is "proc diamond DB NAME STARTS": a worker of the dependency
// test (depends_unix_test.go). It handles kind "node": each run appends
// "ID ATTEMPT NAME READY" to STARTS, READY being whether every job the
// node depends on had completed when it started, then sleeps the
// payload's milliseconds and completes.
func diamond(ctx context.Context, q *litequeue.Queue, name, starts string) error {
	log, err := os.OpenFile(starts, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	q.Handle("node", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, ms int) error {
		deps, err := q.Dependencies(ctx, job.ID)
		if err != nil {
			return err
		}
		ready := true
		for _, d := range deps {
			ready = ready && d.Other.State == litequeue.Completed
		}
		fmt.Fprintf(log, "%d %d %s %t\n", job.ID, job.Attempt, name, ready) // one write: lines never interleave
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	return q.Work(ctx, litequeue.WorkerOptions{Concurrency: 4, Name: name, ShutdownGrace: time.Second})
}
