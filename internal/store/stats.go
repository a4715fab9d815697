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

// pendingKindsSQL reads the kinds of the pending jobs, sorted, through
// the claim index, whose first column is the kind: one probe per kind.
const pendingKindsSQL = `WITH RECURSIVE k(kind) AS (
	SELECT (SELECT kind FROM litequeue_jobs WHERE state = 'pending' ORDER BY kind LIMIT 1)
	UNION ALL
	SELECT (SELECT kind FROM litequeue_jobs WHERE state = 'pending' AND kind > k.kind ORDER BY kind LIMIT 1)
	FROM k WHERE k.kind IS NOT NULL)
	SELECT kind FROM k WHERE kind IS NOT NULL`

// A retry is a failed run after which the job went back to pending; the
// failed runs of one kind are read through the index of failed runs (see
// perFailedKind).
const retriesSQL = `SELECT kind, error_class, COUNT(*) AS n FROM litequeue_attempts
	WHERE kind = ? AND finished_at > ? AND ` + FailedSQL + ` AND next_state = 'pending'
	GROUP BY kind, error_class`

// A death is the run after which the job went dead: a failed run, the
// only kind after which a job goes dead (see perFailedKind).
const deathsSQL = `SELECT kind, error_class, COUNT(*) AS n FROM litequeue_attempts
	WHERE kind = ? AND finished_at > ? AND ` + FailedSQL + ` AND next_state = 'dead'
	GROUP BY kind, error_class`

// failuresSQL counts what retriesSQL and deathsSQL count, per minute as
// well: a retry is a failed run after which the job went back to pending,
// a death any run after which it went dead.
const failuresSQL = `SELECT (finished_at / 60000) * 60000 AS minute, kind, error_class,
	SUM(CASE WHEN next_state = 'pending' THEN 1 ELSE 0 END) AS retries,
	SUM(CASE WHEN next_state = 'dead' THEN 1 ELSE 0 END) AS deaths
	FROM litequeue_attempts
	WHERE kind = ? AND finished_at > ? AND ` + FailedSQL + ` AND (next_state = 'dead' OR next_state = 'pending')
	GROUP BY minute, kind, error_class`

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
// sorted: of each kind with pending jobs, whether its earliest RunAt
// (NextPending) has come. Its reads are probes of the claim index, a few
// per kind and priority, whatever the number of pending jobs.
func DueKinds(ctx context.Context, db Execer, now int64) ([]string, error) {
	kinds, err := selectAll[string](ctx, db, pendingKindsSQL)
	if err != nil {
		return nil, err
	}
	due := kinds[:0]
	for _, kind := range kinds {
		t, err := NextPending(ctx, db, kind, nil, nil)
		if err != nil {
			return nil, err
		}
		if t.Valid && t.Int64 <= now {
			due = append(due, kind)
		}
	}
	return due, nil
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
	return classCounts(perFailedKind[ClassCount](ctx, db, retriesSQL, since))
}

// DeathsSince counts on db, per kind and error class, most first, the
// runs that finished after since and after which the job went dead.
func DeathsSince(ctx context.Context, db Execer, since int64) ([]ClassCount, error) {
	return classCounts(perFailedKind[ClassCount](ctx, db, deathsSQL, since))
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
	return failureRows(perFailedKind[FailureRow](ctx, db, failuresSQL, since))
}
