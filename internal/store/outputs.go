package store

import (
	"context"
	"errors"
)

// A job's output: the value its handler recorded (the root's
// RecordOutput), written with the run's completion by the settle, fenced
// by the same lease (see HeldRow.Output), read by Get, and deleted with
// the job (DeleteJob, DeleteFinished).

// setOutputSQL writes a job's output, replacing the one it had.
const setOutputSQL = `INSERT INTO litequeue_outputs (job_id, output) VALUES (?, ?)
	ON CONFLICT (job_id) DO UPDATE SET output = excluded.output`

const jobOutputSQL = `SELECT output FROM litequeue_outputs WHERE job_id = ?`

// deleteOutputsSQL deletes the outputs of jobs deleted (deleteWithJobs).
const deleteOutputsSQL = `DELETE FROM litequeue_outputs WHERE job_id IN (?)`

// SetOutput writes in tx the output of the job with the given ID,
// replacing the one it had. The caller holds the job's lease in tx (the
// settle writes it only for an end whose fence held).
func SetOutput(ctx context.Context, tx Execer, id int64, output []byte) error {
	_, err := tx.ExecContext(ctx, setOutputSQL, id, output)
	return err
}

// JobOutput reads the output of the job with the given ID on db; nil if
// it has none.
func JobOutput(ctx context.Context, db Execer, id int64) ([]byte, error) {
	return jobValue(ctx, db, jobOutputSQL, id)
}

// jobValue reads the one value of the job with the given ID that query
// selects; nil if the query finds none.
func jobValue(ctx context.Context, db Execer, query string, id int64) ([]byte, error) {
	var v []byte
	err := db.GetContext(ctx, &v, query, id)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	return v, err
}
