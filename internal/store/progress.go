package store

import "context"

// A running job's progress: how far its handler says it is (the root's
// Progress), written coalesced, fenced by the run's lease, read by Get
// and List, kept once the run ends, and deleted with the job (DeleteJob,
// DeleteFinished).

// setProgressSQL writes a job's progress while the lease of token holds
// on the running job of created_at (as setCheckpointSQL).
const setProgressSQL = `INSERT INTO litequeue_progress (job_id, done, total, at)
	SELECT id, ?, ?, ? FROM litequeue_jobs
	WHERE id = ? AND token = ? AND created_at = ? AND state = 'running'
	ON CONFLICT (job_id) DO UPDATE SET done = excluded.done, total = excluded.total, at = excluded.at`

const (
	jobsProgressSQL = `SELECT job_id, done, total, at FROM litequeue_progress WHERE job_id IN (?)`
	// deleteProgressesSQL deletes the progress of jobs deleted
	// (deleteWithJobs).
	deleteProgressesSQL = `DELETE FROM litequeue_progress WHERE job_id IN (?)`
)

// A ProgressRow is a job's progress as stored: done of total (0: not
// known), reported at At (Unix ms).
type ProgressRow struct {
	JobID int64 `db:"job_id"`
	Done  int64 `db:"done"`
	Total int64 `db:"total"`
	At    int64 `db:"at"`
}

// SetProgress writes in tx the progress p of the job of the row as
// claimed, claimed, while its lease holds; it reports false, having
// written nothing, when it does not.
func SetProgress(ctx context.Context, tx Execer, claimed *JobRow, p ProgressRow) (bool, error) {
	return wrote(tx.ExecContext(ctx, setProgressSQL, p.Done, p.Total, p.At, claimed.ID, claimed.Token, claimed.CreatedAt))
}

// JobsProgress reads, in one statement, the progress of those of the
// jobs ids that have one, by job ID.
func JobsProgress(ctx context.Context, db Execer, ids []int64) (map[int64]ProgressRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []ProgressRow
	if err := selectIn(ctx, db, &rows, jobsProgressSQL, ids); err != nil {
		return nil, err
	}
	byID := make(map[int64]ProgressRow, len(rows))
	for _, r := range rows {
		byID[r.JobID] = r
	}
	return byID, nil
}
