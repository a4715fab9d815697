package litequeue

import (
	"context"
)

const requestCancelSQL = `UPDATE litequeue_jobs SET cancel = 1 WHERE id = ? AND state = 'running'`

// Cancel stops a job for good. A pending job — also one scheduled or
// waiting to retry — becomes cancelled at once, with no history row, and
// fires job.cancelled. For a running job Cancel records the request and
// returns nil: its holder cancels the handler's context at its next lease
// renewal and records the run as cancelled whatever the handler returns,
// unless the handler already committed CompleteTx; job.cancelled fires
// then, from the holder's Queue. A holder in another Queue, in this
// process or another, renews within a third of VisibilityTimeout; when
// this Queue holds the job, Cancel has it renew at once. Cancel returns
// ErrNotFound for an ID that names no job, and an error naming the state
// of a job that has already finished.
func (q *Queue) Cancel(ctx context.Context, id int64) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var (
		ev      Event
		running bool
	)
	err = q.write(ctx, func(tx execer) error {
		ev, running = Event{}, false
		now := q.now()
		var row jobRow
		if err := tx.GetContext(ctx, &row, jobByIDSQL, id); err != nil {
			return err
		}
		switch row.State {
		case Running:
			running = true
			_, err := tx.ExecContext(ctx, requestCancelSQL, id)
			return err
		case Pending:
			d := cancelPending(&row, now)
			ev = d.event
			return store(ctx, tx, &d)
		}
		return &stateError{op: "cancel", id: id, state: row.State}
	})
	if err != nil {
		return jobError("cancel", id, err)
	}
	if ev.Type != "" {
		q.emit(ev)
	}
	if running {
		q.renewNow(id)
	}
	return nil
}
