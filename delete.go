package litequeue

import (
	"context"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Delete deletes a finished job — completed, discarded, cancelled, expired
// — or a dead one, with its history, at once rather than at the end of its
// retention, and fires job.deleted with the job as it was. It deletes
// nothing else: idempotency keys stay until their TTL, and the job's ID is
// never given to another job. Delete returns [ErrNotFound] for an ID that
// names no job, and an error naming the state of a pending or running job,
// which it leaves alone: [Queue.Cancel] it first.
func (q *Queue) Delete(ctx context.Context, id int64) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	return q.acts.on(ctx, "delete", id, false, deleteAct(ctx))
}

// deleteAct returns the act of a delete on a job's row: a finished or
// dead job is deleted with its history; a pending or running one is a
// *stateError.
func deleteAct(ctx context.Context) func(store.Execer, *store.JobRow, time.Time) (Event, error) {
	return func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error) {
		if !State(row.State).terminal() {
			return Event{}, &stateError{op: "delete", id: row.ID, state: State(row.State), hint: "cancel it first"}
		}
		return Event{Type: eventDeleted, Job: viewOf(row), At: now}, store.DeleteJob(ctx, tx, row.ID, store.MS(now))
	}
}
