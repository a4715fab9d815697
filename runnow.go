package litequeue

import (
	"context"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// RunNow makes a pending job — scheduled, or waiting to retry — due at
// once, on the injected clock, as River's JobRetry and asynq's RunTask do.
// Its [Job.Attempt], [Job.LastError] and history are kept; RunNow appends a
// history row of its own (outcome run_now, the job's Attempt, worker: the
// [Queue]'s default worker name), fires job.run_now and wakes this Queue's
// idle workers. A job already due is left as it is: no row, no event.
// RunNow returns [ErrNotFound] for an ID that names no job, and an error
// naming the state of a job that is running or finished ([Queue.Replay]
// puts a dead job back).
func (q *Queue) RunNow(ctx context.Context, id int64) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	return q.acts.on(ctx, "run now", id, true, func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error) {
		switch {
		case State(row.State) != Pending:
			return Event{}, &stateError{op: "run now", id: id, state: State(row.State)}
		case row.RunAt.Valid && row.RunAt.Int64 <= store.MS(now):
			return Event{}, nil // due already
		}
		d := makeDue(row, OutcomeRunNow, row.Attempt, q.worker, now)
		err := storeDecision(ctx, tx, &d)
		return d.event, err
	})
}
