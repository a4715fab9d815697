package store

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// The reads of dead jobs that a replay and a dry run of a purge make.

const deadByIDSQL = `SELECT ` + JobColumns + ` FROM litequeue_jobs
	WHERE id IN (?) AND state = 'dead' ORDER BY id /*FOR UPDATE*/`

const tallyDeadSQL = `SELECT COUNT(*) AS jobs, COALESCE(MAX(id), 0) AS max_id
	FROM litequeue_jobs WHERE state = 'dead' AND finished_at <= ?`

// deadUpToSQL is finishedJobsSQL for the dead jobs up to an ID, in order.
const deadUpToSQL = finishedJobsSQL + ` AND id <= ? ORDER BY id`

// DeadJobs reads, in the write transaction tx, the rows of those of the
// jobs with the given IDs that are dead, in ID order, for tx to write
// them: on a server they stay locked until tx ends (see LockJob).
func DeadJobs(ctx context.Context, tx Execer, ids []int64) ([]JobRow, error) {
	query, args, err := sqlx.In(deadByIDSQL, ids)
	if err != nil {
		return nil, err
	}
	return selectAll[JobRow](ctx, tx, query, args...)
}

// TallyDead counts on db the dead jobs that died at or before cutoff, and
// returns the highest ID among them (0 for none), from one statement.
func TallyDead(ctx context.Context, db Execer, cutoff int64) (jobs int, maxID int64, err error) {
	return tally(ctx, db, tallyDeadSQL, cutoff)
}

// DeadUpTo returns, in ID order, the dead jobs that died at or before
// cutoff with an ID of at most maxID, with the size of their history.
func DeadUpTo(ctx context.Context, db Execer, cutoff, maxID int64) ([]Finished, error) {
	var found []Finished
	err := selectIn(ctx, db, &found, deadUpToSQL, []string{"dead"}, cutoff, maxID)
	return found, err
}
