package litequeue

import "context"

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
		d := makeDue(&row, OutcomeRunNow, row.Attempt, q.worker, now)
		if err := store(ctx, tx, &d); err != nil {
			return err
		}
		ev = d.event
		return nil
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
