package litequeue

import "context"

const deleteJobSQL = `DELETE FROM litequeue_jobs WHERE id = ?`

const deleteJobHistorySQL = `DELETE FROM litequeue_attempts WHERE job_id = ?`

// Delete deletes a finished job — completed, discarded, cancelled — or a
// dead one, with its history, at once rather than at the end of its
// retention, and fires job.deleted with the job as it was. It deletes
// nothing else: idempotency keys stay until their TTL, and the job's ID is
// never given to another job. Delete returns ErrNotFound for an ID that
// names no job, and an error naming the state of a pending or running job,
// which it leaves alone: Cancel it first.
func (q *Queue) Delete(ctx context.Context, id int64) error {
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
		if !row.State.terminal() {
			return &stateError{op: "delete", id: id, state: row.State, hint: "cancel it first"}
		}
		if _, err := tx.ExecContext(ctx, deleteJobSQL, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, deleteJobHistorySQL, id)
		ev = Event{Type: eventDeleted, Job: *row.job(), At: q.now()}
		return err
	})
	if err != nil {
		return jobError("delete", id, err)
	}
	q.emit(ev)
	return nil
}
