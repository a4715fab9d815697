package store

import (
	"context"
	"strings"
)

// insertAttemptSQL adds one history row, its values in the order of
// HistoryRow.Values; AttemptValues is the row's place in VALUES.
const (
	insertAttemptSQL = `INSERT INTO litequeue_attempts
	(job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state)
	VALUES ` + AttemptValues
	AttemptValues = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// InsertAttemptsSQL is the statement that adds n history rows at once,
// their values in the order of HistoryRow.Values, row after row.
func InsertAttemptsSQL(n int) string {
	return insertAttemptSQL + strings.Repeat(", "+AttemptValues, n-1)
}

// Values appends the values of h's columns, in the order of
// InsertAttemptsSQL, to args.
func (h *HistoryRow) Values(args []any) []any {
	return append(args, h.JobID, h.Attempt, h.StartedAt, h.FinishedAt,
		h.Outcome, h.Error, h.ErrorClass, h.Delay, h.Worker, h.Kind, h.Next)
}

// AddHistoryRow adds the history row h; nil adds none.
func AddHistoryRow(ctx context.Context, tx Execer, h *HistoryRow) error {
	if h == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx, insertAttemptSQL, h.Values(nil)...)
	return err
}

// historySQL orders a job's rows by ID, the order they were written. A
// job's runs never overlap (a run's row is written when it ends, and the
// next run starts after that), so this is the order the runs started, also
// when the clock went back between them and their StartedAt times say
// otherwise.
const historySQL = `SELECT attempt, started_at, finished_at, outcome, error, error_class, delay, worker
	FROM litequeue_attempts WHERE job_id = ? ORDER BY id`

// History reads on db the history rows of the job with the given ID, in
// the order the job's runs started (see historySQL); none for an ID that
// names no job.
func History(ctx context.Context, db Execer, jobID int64) ([]AttemptRow, error) {
	return selectAll[AttemptRow](ctx, db, historySQL, jobID)
}
