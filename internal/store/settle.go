package store

import "context"

const setRowSQL = `UPDATE litequeue_jobs
	SET state = ?, attempt = ?, run_at = ?, finished_at = ?, last_error = ?,
	    lease_until = 0, cancel = 0
	WHERE id = ?`

// setHeldRowSQL is setRowSQL fenced by the lease: it changes the row only
// while the holder's token is current and no Cancel came.
const setHeldRowSQL = setRowSQL + ` AND token = ? AND created_at = ? AND state = 'running' AND cancel = 0`

// SetRow writes the job's row as after is: its state, attempt, RunAt,
// FinishedAt and last error, holding no lease and no cancel request.
func SetRow(ctx context.Context, tx Execer, after *JobRow) error {
	a := after
	_, err := tx.ExecContext(ctx, setRowSQL, a.State, a.Attempt, a.RunAt, a.FinishedAt, a.LastError, a.ID)
	return err
}

// SetHeldRow is SetRow for the holder of the lease on the row as claimed,
// claimed: it writes the row only while the lease holds, and reports
// false, having changed nothing, when it does not. (One UPDATE for a
// whole batch's rows, FROM json_each or FROM VALUES, cost the file as
// much per row or more.)
func SetHeldRow(ctx context.Context, tx Execer, claimed, after *JobRow) (bool, error) {
	a := after
	res, err := tx.ExecContext(ctx, setHeldRowSQL, a.State, a.Attempt, a.RunAt, a.FinishedAt, a.LastError,
		a.ID, claimed.Token, claimed.CreatedAt)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
