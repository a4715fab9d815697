package store

import "context"

// A job's checkpoint: a small value its handler saves during a run (the
// root's Checkpoint), written at once in a transaction of its own fenced
// by the run's lease, read back by the job's next claim, kept by a replay
// and deleted with the job (DeleteJob, DeleteFinished) or by
// DeleteCheckpoint.

// setCheckpointSQL writes a job's checkpoint, replacing the one it had,
// only while the lease of token holds on the running job of created_at
// (as setHeldRowSQL's fence). The SELECT's WHERE keeps SQLite from
// reading ON CONFLICT as a join's.
const setCheckpointSQL = `INSERT INTO litequeue_checkpoints (job_id, checkpoint)
	SELECT id, ? FROM litequeue_jobs
	WHERE id = ? AND token = ? AND created_at = ? AND state = 'running'
	ON CONFLICT (job_id) DO UPDATE SET checkpoint = excluded.checkpoint`

const (
	jobCheckpointSQL    = `SELECT checkpoint FROM litequeue_checkpoints WHERE job_id = ?`
	jobsCheckpointsSQL  = `SELECT job_id, checkpoint FROM litequeue_checkpoints WHERE job_id IN (?)`
	deleteCheckpointSQL = `DELETE FROM litequeue_checkpoints WHERE job_id = ?`
	// deleteCheckpointsSQL deletes those of jobs deleted (deleteWithJobs).
	deleteCheckpointsSQL = `DELETE FROM litequeue_checkpoints WHERE job_id IN (?)`
)

// SetCheckpoint writes in tx the checkpoint of the job of the row as
// claimed, claimed, while its lease holds; it reports false, having
// written nothing, when it does not.
func SetCheckpoint(ctx context.Context, tx Execer, claimed *JobRow, checkpoint []byte) (bool, error) {
	return wrote(tx.ExecContext(ctx, setCheckpointSQL, checkpoint, claimed.ID, claimed.Token, claimed.CreatedAt))
}

// JobCheckpoint reads the checkpoint of the job with the given ID on db;
// nil if it has none.
func JobCheckpoint(ctx context.Context, db Execer, id int64) ([]byte, error) {
	return jobValue(ctx, db, jobCheckpointSQL, id)
}

// JobsCheckpoints reads, in one statement, the checkpoints of those of
// the jobs ids that have one, by job ID.
func JobsCheckpoints(ctx context.Context, db Execer, ids []int64) (map[int64][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []SavedCheckpoint
	if err := selectIn(ctx, db, &rows, jobsCheckpointsSQL, ids); err != nil {
		return nil, err
	}
	return CheckpointsByID(rows), nil
}

// SavedCheckpoint is a row of litequeue_checkpoints.
type SavedCheckpoint struct {
	JobID      int64  `db:"job_id"`
	Checkpoint []byte `db:"checkpoint"`
}

// CheckpointsByID returns the checkpoints of rows by job ID.
func CheckpointsByID(rows []SavedCheckpoint) map[int64][]byte {
	byID := make(map[int64][]byte, len(rows))
	for _, r := range rows {
		byID[r.JobID] = r.Checkpoint
	}
	return byID
}

// DeleteCheckpoint deletes in tx the checkpoint of the job with the given
// ID, if it has one.
func DeleteCheckpoint(ctx context.Context, tx Execer, id int64) error {
	_, err := tx.ExecContext(ctx, deleteCheckpointSQL, id)
	return err
}
