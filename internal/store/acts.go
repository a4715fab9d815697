package store

import "context"

// The writes of the operator's acts on one job that no decision makes
// (see the root's cancel.go and delete.go): a cancel request, a delete.

const requestCancelSQL = `UPDATE litequeue_jobs SET cancel = 1 WHERE id = ? AND state = 'running'`

const deleteJobSQL = `DELETE FROM litequeue_jobs WHERE id = ? RETURNING id, queue, kind, state, dependents`

// RequestCancel records in tx that the running job with the given ID is
// asked to stop; its holder sees the request at its next lease renewal
// (SetHeldRow no longer holds it). A job that is not running is left as
// it is.
func RequestCancel(ctx context.Context, tx Execer, id int64) error {
	_, err := tx.ExecContext(ctx, requestCancelSQL, id)
	return err
}

// DeleteJob deletes in tx the job with the given ID, and what is kept of
// it (deleteWithJobs: its history, output, checkpoint and progress), and
// nothing else: its idempotency keys stay, and no other job ever gets its
// ID (AUTOINCREMENT on the file, an identity column on a server). Its
// dependents, if it has any, learn at now that it will never complete
// (Resolve, Deleted).
func DeleteJob(ctx context.Context, tx Execer, id int64, now int64) error {
	deleted, err := selectAll[deletedJob](ctx, tx, deleteJobSQL, id)
	if err != nil {
		return err
	}
	return endDeleted(ctx, tx, deleted, now)
}
