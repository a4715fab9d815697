package store

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// The reads of dead jobs that a replay and a dry run of a purge make.

const deadByIDSQL = `SELECT ` + JobColumns + ` FROM litequeue_jobs
	WHERE id IN (?) AND state = 'dead' ORDER BY id /*FOR UPDATE*/`

const countDeadSQL = `SELECT COUNT(*) FROM litequeue_jobs WHERE state = 'dead' AND finished_at <= ?`

// DeadJobs reads, in the write transaction tx, the rows of those of the
// jobs with the given IDs that are dead, in ID order, for tx to write
// them: on a server they stay locked until tx ends (see LockJob).
func DeadJobs(ctx context.Context, tx Execer, ids []int64) ([]JobRow, error) {
	query, args, err := sqlx.In(deadByIDSQL, ids)
	if err != nil {
		return nil, err
	}
	var rows []JobRow
	err = tx.SelectContext(ctx, &rows, query, args...)
	return rows, err
}

// CountDead counts on db the dead jobs that died at or before cutoff.
func CountDead(ctx context.Context, db Execer, cutoff int64) (int, error) {
	var n int
	err := db.GetContext(ctx, &n, countDeadSQL, cutoff)
	return n, err
}
