package store

import "context"

// A job's row, read by its ID, on every engine.

// lockJobSQL reads a job's row in a write transaction that then writes
// it: on a server the row stays locked until the transaction ends (the
// file's writers take turns anyway).
const lockJobSQL = `SELECT ` + JobColumns + ` FROM litequeue_jobs WHERE id = ? /*FOR UPDATE*/`

// JobByID reads the row of the job with the given ID on db, scanning the
// columns cols (Info.JobColumns: a file read without being migrated has
// fewer); ErrNoRows if no job has the ID.
func JobByID(ctx context.Context, db Execer, cols string, id int64) (*JobRow, error) {
	row := new(JobRow)
	if err := db.GetContext(ctx, row, `SELECT `+cols+` FROM litequeue_jobs WHERE id = ?`, id); err != nil {
		return nil, err
	}
	return row, nil
}

// LockJob reads, in the write transaction tx, the row of the job with
// the given ID, for tx to write it: on a server the row stays locked
// until tx ends; on the file, whose writers take turns, it is a plain
// read. ErrNoRows if no job has the ID.
func LockJob(ctx context.Context, tx Execer, id int64) (*JobRow, error) {
	row := new(JobRow)
	if err := tx.GetContext(ctx, row, lockJobSQL, id); err != nil {
		return nil, err
	}
	return row, nil
}
