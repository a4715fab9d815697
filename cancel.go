package litequeue

import (
	"context"
	"time"
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
	running := false
	err := q.actOn(ctx, "cancel", id, false, func(tx execer, row *jobRow, now time.Time) (Event, error) {
		switch running = row.State == Running; row.State {
		case Running:
			_, err := tx.ExecContext(ctx, requestCancelSQL, id)
			return Event{}, err
		case Pending:
			d := cancelPending(row, now)
			err := store(ctx, tx, &d)
			return d.event, err
		}
		return Event{}, &stateError{op: "cancel", id: id, state: row.State}
	})
	if err == nil && running {
		q.renewNow(id)
	}
	return err
}

// actOn runs act, one of the operator's acts on a job (Cancel, Replay,
// RunNow, Delete), in a write transaction on the job's row as it is then,
// and fires the event act returns, if any, after the commit (waking idle
// workers first if wake). act may run more than once (see writer.do): it
// sets its results afresh each time. A missing job is ErrNotFound, and
// every error names op and the ID (see jobError).
func (q *Queue) actOn(ctx context.Context, op string, id int64, wake bool, act func(tx execer, row *jobRow, now time.Time) (Event, error)) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var ev Event
	err = q.write(ctx, func(tx execer) error {
		var row jobRow
		if err := tx.GetContext(ctx, &row, jobByIDSQL, id); err != nil {
			return err
		}
		var err error
		ev, err = act(tx, &row, q.now())
		return err
	})
	if err != nil {
		return jobError(op, id, err)
	}
	if ev.Type != "" {
		if wake {
			q.notify()
		}
		q.emit(ev)
	}
	return nil
}
