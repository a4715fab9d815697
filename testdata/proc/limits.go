package main

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// limits is "proc limits DB NAME N": it enqueues N "mutex" jobs, whose
// kind has MaxRunning(1), and "other" jobs until no "mutex" job in the
// file is pending or running, and works them with 8 workers until no job
// in the file is; it prints a JSON report. The test made two tables:
// limit_inside, one row counting the "mutex" runs in progress in every
// process, and limit_runs, where each run adds a row: its job, this
// process's name, its kind, and the count of "mutex" runs in progress
// once it began (its own included, for a "mutex" run).
func limits(ctx context.Context, q *litequeue.Queue, logs *errorsSeen, name, count string) error {
	n, _ := strconv.Atoi(count)
	record := func(ctx context.Context, job *litequeue.Job, change int) error {
		return q.WriteTx(ctx, func(tx *sqlx.Tx) error {
			var inside int
			if err := tx.GetContext(ctx, &inside, tx.Rebind(`UPDATE limit_inside SET n = n + ? RETURNING n`), change); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO limit_runs (job_id, proc, kind, inside) VALUES (?, ?, ?, ?)`),
				job.ID, name, job.Kind, inside)
			return err
		})
	}
	q.Handle("mutex", func(ctx context.Context, job *litequeue.Job) error {
		if err := record(ctx, job, 1); err != nil {
			return err
		}
		time.Sleep(5 * time.Millisecond)
		return q.WriteTx(ctx, func(tx *sqlx.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE limit_inside SET n = n - 1`)
			return err
		})
	}, litequeue.MaxRunning(1))
	q.Handle("other", func(ctx context.Context, job *litequeue.Job) error {
		time.Sleep(time.Millisecond)
		return record(ctx, job, 0)
	})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- q.Work(wctx, litequeue.WorkerOptions{Concurrency: 8, Name: name, ShutdownGrace: time.Second})
	}()
	for i := range n {
		if _, err := q.Enqueue(ctx, "mutex", i); err != nil {
			return err
		}
	}
	// "other" jobs come in while the "mutex" ones run, ahead of them: a
	// worker that ends a "mutex" run takes one next, which frees the
	// limit for the claimers of every process.
	for i := 0; !allDone(ctx, q, "mutex"); i++ {
		if _, err := q.Enqueue(ctx, "other", i, litequeue.Priority(1)); err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
	for !allDone(ctx, q, "") {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"errors_logged": logs.n})
}
