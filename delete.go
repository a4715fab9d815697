package litequeue

import (
	"context"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

const deleteJobSQL = `DELETE FROM litequeue_jobs WHERE id = ?`

const deleteJobHistorySQL = `DELETE FROM litequeue_attempts WHERE job_id = ?`

// Delete deletes a finished job — completed, discarded, cancelled, expired
// — or a dead one, with its history, at once rather than at the end of its
// retention, and fires job.deleted with the job as it was. It deletes
// nothing else: idempotency keys stay until their TTL, and the job's ID is
// never given to another job. Delete returns [ErrNotFound] for an ID that
// names no job, and an error naming the state of a pending or running job,
// which it leaves alone: [Queue.Cancel] it first.
func (q *Queue) Delete(ctx context.Context, id int64) error {
	return q.actOn(ctx, "delete", id, false, func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error) {
		if !State(row.State).terminal() {
			return Event{}, &stateError{op: "delete", id: id, state: State(row.State), hint: "cancel it first"}
		}
		if _, err := tx.ExecContext(ctx, deleteJobSQL, id); err != nil {
			return Event{}, err
		}
		_, err := tx.ExecContext(ctx, deleteJobHistorySQL, id)
		return Event{Type: eventDeleted, Job: viewOf(row), At: now}, err
	})
}
