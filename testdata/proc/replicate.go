package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/litequeue/litequeue"
)

// replicate is "proc replicate DB CHECKPOINT SECONDS", the app of the
// Litestream test (options_unix_test.go): it opens DB with
// Options.Checkpoint CHECKPOINT, enqueues two "hold" jobs, whose handlers
// run until the end, then for SECONDS enqueues "task" jobs from two
// goroutines while a Work runs them: a task fails now and then, before it
// succeeds or dies, and marks an idempotency key when it succeeds. It
// prints "acked ID" for each enqueue once it is acknowledged, "held ID"
// when a hold job starts, and at the end, after a clean shutdown, a JSON
// report.
func replicate(args []string, logs *errorsSeen) error {
	if len(args) != 3 {
		return errors.New("usage: proc replicate DB CHECKPOINT SECONDS")
	}
	seconds, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	q, err := litequeue.Open(args[0], litequeue.Options{
		Checkpoint: args[1],
		Retry:      litequeue.Policy{Backoff: litequeue.Constant, Base: 100 * time.Millisecond, MaxTries: 4},
		Logger:     slog.New(logs),
	})
	if err != nil {
		return err
	}
	defer q.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	q.Handle("hold", func(ctx context.Context, job *litequeue.Job) error {
		fmt.Printf("held %d\n", job.ID)
		<-ctx.Done() // the shutdown: the job is released without using a try
		return ctx.Err()
	})
	q.Handle("task", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, n int) error {
		time.Sleep(time.Duration(n%5) * time.Millisecond) // the task's work
		switch {
		case n%13 == 0:
			return litequeue.Permanent(fmt.Errorf("task %d can never succeed", n))
		case n%4 == 0 && job.Attempt < 3:
			return fmt.Errorf("task %d failed on attempt %d", n, job.Attempt)
		}
		return q.Mark(ctx, "task-"+strconv.Itoa(n), time.Hour)
	}))
	acked := func(j *litequeue.Job, err error) error {
		if err == nil {
			fmt.Printf("acked %d\n", j.ID) // acknowledged: the commit is durable
		}
		return err
	}
	for range 2 {
		if err := acked(q.Enqueue(ctx, "hold", nil)); err != nil {
			return err
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	worked := make(chan error, 1)
	go func() {
		worked <- q.Work(wctx, litequeue.WorkerOptions{Concurrency: 8, Name: "replicated", ShutdownGrace: time.Second})
	}()

	end := time.Now().Add(time.Duration(seconds) * time.Second)
	var producers sync.WaitGroup
	errs := make(chan error, 2)
	for p := range 2 {
		producers.Go(func() {
			for i := p; time.Now().Before(end) && ctx.Err() == nil; i += 2 {
				if err := acked(q.Enqueue(ctx, "task", i)); err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
				time.Sleep(time.Millisecond) // a producer of a device, not a benchmark
			}
		})
	}
	producers.Wait()
	cancel()
	if err := <-worked; err != nil {
		return err
	}
	close(errs)
	for err := range errs {
		return fmt.Errorf("enqueue: %w", err)
	}
	if err := q.Close(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"errors_logged": logs.n})
}
