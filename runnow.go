package litequeue

import (
	"context"
	"database/sql"
)

// RunNow makes a pending job — scheduled, or waiting to retry — due at
// once, on the injected clock, as River's JobRetry and asynq's RunTask do.
// Its Attempt, LastError and history are kept; RunNow appends a history
// row of its own (outcome run_now, the job's Attempt, worker: the Queue's
// default worker name), fires job.run_now and wakes this Queue's idle
// workers. A job already due is left as it is: no row, no event. RunNow
// returns ErrNotFound for an ID that names no job, and an error naming the
// state of a job that is running or finished (Replay puts a dead job
// back).
func (q *Queue) RunNow(ctx context.Context, id int64) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var ev Event
	err = q.write(ctx, func(tx execer) error {
		ev = Event{}
		now := q.now()
		var row jobRow
		if err := tx.GetContext(ctx, &row, jobByIDSQL, id); err != nil {
			return err
		}
		switch {
		case row.State != Pending:
			return &stateError{op: "run now", id: id, state: row.State}
		case row.RunAt.Valid && row.RunAt.Int64 <= ms(now):
			return nil // due already
		}
		m := move{state: Pending, attempt: row.Attempt, runAt: nullMS(now), finished: sql.NullInt64{}, lastError: row.LastError}
		after, err := m.apply(ctx, tx, id)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, insertAttemptSQL, id, row.Attempt, ms(now), ms(now),
			OutcomeRunNow, "", "", 0, q.worker, row.Kind, Pending)
		ev = Event{Type: "job.run_now", Job: *after.job(), At: now}
		return err
	})
	if err != nil {
		return jobError("run now", id, err)
	}
	if ev.Type != "" {
		q.notify()
		q.emit(ev)
	}
	return nil
}
