package litequeue

import (
	"context"
	"database/sql"
	"errors"
)

// A decision (see decide.go) is stored here, in one place: the job's row,
// then its history row.

var errNoRows = sql.ErrNoRows

// execer is what litequeue's SQL runs on: the writer's connection inside
// one of its transactions, or a caller's *sqlx.Tx (EnqueueTx, MarkTx,
// CompleteTx). Both paths share one piece of SQL.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

const settleSQL = `UPDATE litequeue_jobs
	SET state = ?, attempt = ?, run_at = ?, finished_at = ?, last_error = ?,
	    lease_until = 0, cancel = 0
	WHERE id = ?`

// settleHeldSQL is settleSQL fenced by the lease: it changes the row only
// while the holder's token is current and no Cancel came.
const settleHeldSQL = settleSQL + ` AND token = ? AND created_at = ? AND state = 'running' AND cancel = 0`

const insertAttemptSQL = `INSERT INTO litequeue_attempts
	(job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// store writes the decision d in tx: the job's row, unless d keeps it, and
// its history row, if it has one. The caller has checked that it may: it
// holds the lease, the lease expired, or the job is in a state the act
// applies to.
func store(ctx context.Context, tx execer, d *decision) error {
	if err := storeRow(ctx, tx, d); err != nil {
		return err
	}
	return storeHistory(ctx, tx, d.history)
}

// storeRow is store without the history row.
func storeRow(ctx context.Context, tx execer, d *decision) error {
	if d.keep {
		return nil
	}
	a := &d.after
	_, err := tx.ExecContext(ctx, settleSQL, a.State, a.Attempt, a.RunAt, a.FinishedAt, a.LastError, a.ID)
	return err
}

// storeHeld is storeRow for the holder of the lease on the row as
// claimed, claimed: it writes the row only while the lease holds, and
// reports false, having changed nothing, when it does not. (One UPDATE
// for a whole batch's rows, FROM json_each or FROM VALUES, cost the file
// as much per row or more.)
func storeHeld(ctx context.Context, tx execer, claimed *jobRow, d *decision) (bool, error) {
	a := &d.after
	res, err := tx.ExecContext(ctx, settleHeldSQL, a.State, a.Attempt, a.RunAt, a.FinishedAt, a.LastError,
		a.ID, claimed.Token, claimed.CreatedAt)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// addHistoryEach adds the history rows, one statement a row: an engine's
// addHistory where no statement adds many.
func addHistoryEach(ctx context.Context, tx execer, rows []*historyRow) error {
	for _, h := range rows {
		if err := storeHistory(ctx, tx, h); err != nil {
			return err
		}
	}
	return nil
}

// storeHistory adds the history row h; nil adds none.
func storeHistory(ctx context.Context, tx execer, h *historyRow) error {
	if h == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx, insertAttemptSQL, h.jobID, h.Attempt, h.StartedAt, h.FinishedAt,
		h.Outcome, h.Error, h.ErrorClass, h.Delay, h.Worker, h.kind, h.next)
	return err
}

const jobByIDSQL = `SELECT ` + jobColumns + ` FROM litequeue_jobs WHERE id = ? /*FOR UPDATE*/`

// holder reads the row of job — a leased job, as its handler got it — and
// checks that the lease token is still the current one on a running job;
// else ErrLeaseLost. A job already completed under the same token
// (CompleteTx) is reported through done.
//
// An ID names one job for good: it is never given to another job, also
// after retention purged the job (litequeue_jobs.id is AUTOINCREMENT since
// schema version 3), so a worker paused for longer than the retention finds
// no row. CreatedAt is compared as well, as settleHeldSQL does: a file
// migrated from version 2 may hold a job that got the ID of a job purged
// before the upgrade.
func holder(ctx context.Context, tx execer, job *Job) (row *jobRow, done bool, err error) {
	row = new(jobRow)
	if err := tx.GetContext(ctx, row, jobByIDSQL, job.ID); err != nil {
		if errors.Is(err, errNoRows) {
			return nil, false, ErrLeaseLost
		}
		return nil, false, err
	}
	switch {
	case row.Token != job.token || row.CreatedAt != ms(job.CreatedAt):
		return nil, false, ErrLeaseLost
	case row.State == Completed:
		return row, true, nil
	case row.State != Running:
		return nil, false, ErrLeaseLost
	}
	return row, false, nil
}
