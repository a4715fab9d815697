package store

import (
	"context"
	"database/sql"
)

// The reads of a queue's figures for monitoring: its jobs by state, the
// kinds that have due jobs, and the failures of the last hour, on every
// engine.

const countByStateSQL = `SELECT queue, state,
	CASE WHEN state = 'pending' AND run_at <= ? THEN 1 ELSE 0 END AS due,
	COUNT(*) AS n, MIN(run_at) AS oldest
	FROM litequeue_jobs GROUP BY queue, state, due`

const dueKindsSQL = `SELECT DISTINCT kind FROM litequeue_jobs
	WHERE state = 'pending' AND run_at <= ? ORDER BY kind`

// A retry is a failed run after which the job went back to pending.
const retriesSQL = `SELECT kind, error_class, COUNT(*) AS n FROM litequeue_attempts
	WHERE finished_at > ? AND next_state = 'pending' AND ` + FailedSQL + `
	GROUP BY kind, error_class ORDER BY n DESC, kind, error_class`

// A death is the run after which the job went dead.
const deathsSQL = `SELECT kind, error_class, COUNT(*) AS n FROM litequeue_attempts
	WHERE finished_at > ? AND next_state = 'dead'
	GROUP BY kind, error_class ORDER BY n DESC, kind, error_class`

// failuresSQL counts what retriesSQL and deathsSQL count, per minute as
// well: a retry is a failed run after which the job went back to pending,
// a death any run after which it went dead.
const failuresSQL = `SELECT (finished_at / 60000) * 60000 AS minute, kind, error_class,
	SUM(CASE WHEN next_state = 'pending' THEN 1 ELSE 0 END) AS retries,
	SUM(CASE WHEN next_state = 'dead' THEN 1 ELSE 0 END) AS deaths
	FROM litequeue_attempts
	WHERE finished_at > ? AND (next_state = 'dead' OR (next_state = 'pending' AND ` + FailedSQL + `))
	GROUP BY minute, kind, error_class ORDER BY minute, kind, error_class`

// StateCount is a row of CountByState: the jobs of one queue in one
// state, the pending ones split into due and not.
type StateCount struct {
	Queue  string        `db:"queue"`
	State  string        `db:"state"`
	Due    bool          `db:"due"` // pending, and due at the time asked
	N      int           `db:"n"`
	Oldest sql.NullInt64 `db:"oldest"` // the earliest RunAt of the group; KeptCountByState reads it of the due groups only
}

// CountByState counts on db the jobs of each queue in each state, the
// pending ones split into those due at now and those not, with a scan of
// every job: for a database that keeps no counts (see KeptCountByState).
func CountByState(ctx context.Context, db Execer, now int64) ([]StateCount, error) {
	return selectAll[StateCount](ctx, db, countByStateSQL, now)
}

// DueKinds reads on db the kinds that have pending jobs due at now,
// sorted.
func DueKinds(ctx context.Context, db Execer, now int64) ([]string, error) {
	return selectAll[string](ctx, db, dueKindsSQL, now)
}

// ClassCount counts the runs of one kind that ended with one error
// class.
type ClassCount struct {
	Kind  string `db:"kind"`
	Class string `db:"error_class"`
	N     int    `db:"n"`
}

// RetriesSince counts on db, per kind and error class, most first, the
// failed runs that finished after since and after which the job went
// back to pending.
func RetriesSince(ctx context.Context, db Execer, since int64) ([]ClassCount, error) {
	return selectAll[ClassCount](ctx, db, retriesSQL, since)
}

// DeathsSince counts on db, per kind and error class, most first, the
// runs that finished after since and after which the job went dead.
func DeathsSince(ctx context.Context, db Execer, since int64) ([]ClassCount, error) {
	return selectAll[ClassCount](ctx, db, deathsSQL, since)
}

// FailureRow counts, for one minute (its start in Unix ms), one kind and
// one error class, the runs RetriesSince and DeathsSince count.
type FailureRow struct {
	Minute  int64  `db:"minute"`
	Kind    string `db:"kind"`
	Class   string `db:"error_class"`
	Retries int    `db:"retries"`
	Deaths  int    `db:"deaths"`
}

// FailuresSince counts on db the retries and deaths of the runs that
// finished after since, per minute, kind and error class, in that order;
// minutes without either are left out.
func FailuresSince(ctx context.Context, db Execer, since int64) ([]FailureRow, error) {
	return selectAll[FailureRow](ctx, db, failuresSQL, since)
}
