package postgres

import (
	"context"
	"database/sql"

	"github.com/litequeue/litequeue/internal/store"
)

// pgSetHeldRowsSQL is store.SetHeldRow for every row of a batch, and the
// history rows and outputs of those it wrote, in one statement: one round trip for a
// batch of run ends. Its first arrays hold, for each row, its fence (id,
// token, created_at), its values after the run and its output (NULL:
// none), written for the rows written; the history's arrays
// (pgHistoryArrays, after the number of the row each belongs to) are
// added for the rows written, in the order of the arrays, which the
// identity column numbers them in. It returns the number (from 1) of each
// row it wrote: a job may have two ends in one batch, of which one holds
// (a run that lost its lease and the run that claimed the job again, or
// the runs of the job before and after a restore gave its ID to a job of
// another created_at, under the same token), and only the row's number
// tells them apart; and its job's count of dependents, as the row is
// after the write (the count an enqueue raised while the write waited
// for its row lock included).
const pgSetHeldRowsSQL = `WITH v AS (
	SELECT * FROM unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::bytea[])
	     WITH ORDINALITY AS v(id, token, created_at, state, attempt, run_at, finished_at, last_error, output, n)
), s AS (
	UPDATE litequeue_jobs AS j
	SET state = v.state, attempt = v.attempt, run_at = v.run_at, finished_at = v.finished_at,
	    last_error = v.last_error, lease_until = 0, cancel = 0
	FROM v
	WHERE j.id = v.id AND j.token = v.token AND j.created_at = v.created_at
	  AND j.state = 'running' AND j.cancel = 0
	RETURNING v.n, v.id, v.output, j.dependents
), outputs AS (
	INSERT INTO litequeue_outputs (job_id, output)
	SELECT s.id, s.output FROM s WHERE s.output IS NOT NULL
	ON CONFLICT (job_id) DO UPDATE SET output = excluded.output
), added AS (
	INSERT INTO litequeue_attempts
	(job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state)
	SELECT h.job_id, h.attempt, h.started_at, h.finished_at, h.outcome, h.error, h.error_class,
	       h.delay, h.worker, h.kind, h.next_state
	FROM ` + pgHistoryArrays + ` JOIN s ON s.n = h.row_n
	ORDER BY h.n
)
SELECT n, dependents FROM s`

// pgHistoryArrays are the history rows of a batch, as arrays that hold
// each column's values (historyArgs), numbered n in their order, each
// with the number of the row of pgSetHeldRowsSQL it belongs to.
const pgHistoryArrays = `unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[],
	            ?::bigint[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY
	     AS h(row_n, job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state, n)`

// SetHeldRows writes every row that its lease still holds, and the
// history rows and outputs of those, in one statement (pgSetHeldRowsSQL),
// and marks those whose jobs have dependents.
func (e *Engine) SetHeldRows(ctx context.Context, tx store.Execer, rows []store.HeldRow) ([]bool, error) {
	n := len(rows)
	ids, tokens, created := make([]int64, n), make([]int64, n), make([]int64, n)
	states, errs := make([]string, n), make([]string, n)
	attempts, runAts, finishedAts := make([]int64, n), make([]*int64, n), make([]*int64, n)
	outputs := make([][]byte, n)
	var history []*store.HistoryRow
	var rowOf []int64 // the number of the row of each history row, from 1
	for i, r := range rows {
		a := r.After
		ids[i], tokens[i], created[i] = a.ID, r.Claimed.Token, r.Claimed.CreatedAt
		states[i], attempts[i], errs[i] = a.State, int64(a.Attempt), store.StorableText(a.LastError)
		runAts[i], finishedAts[i] = nullable(a.RunAt), nullable(a.FinishedAt)
		outputs[i] = r.Output
		if r.History != nil {
			history, rowOf = append(history, r.History), append(rowOf, int64(i+1))
		}
	}
	args := append([]any{ids, tokens, created, states, attempts, runAts, finishedAts, errs, outputs, rowOf}, historyArgs(history)...)
	var wrote []struct {
		N          int64 `db:"n"`
		Dependents int64 `db:"dependents"`
	}
	if err := tx.SelectContext(ctx, &wrote, pgSetHeldRowsSQL, args...); err != nil {
		return nil, err
	}
	held := make([]bool, n)
	for _, w := range wrote {
		held[w.N-1], rows[w.N-1].Dependents = true, w.Dependents > 0
	}
	return held, nil
}

// nullable is v as an array's element: nil for NULL.
func nullable(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// pgAddHistorySQL adds the history rows of a batch in one statement, in
// the order of its arrays, which the identity column numbers them in.
// Their rows' numbers are not needed, and are NULL.
const pgAddHistorySQL = `INSERT INTO litequeue_attempts
	(job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state)
	SELECT h.job_id, h.attempt, h.started_at, h.finished_at, h.outcome, h.error, h.error_class,
	       h.delay, h.worker, h.kind, h.next_state
	FROM ` + pgHistoryArrays + `
	ORDER BY h.n`

// AddHistory adds the rows in one statement (pgAddHistorySQL), whatever
// their number; none, none.
func (e *Engine) AddHistory(ctx context.Context, tx store.Execer, rows []*store.HistoryRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, pgAddHistorySQL, append([]any{[]int64(nil)}, historyArgs(rows)...)...)
	return err
}

// historyArgs are the arrays of pgHistoryArrays after the rows' numbers:
// the values of each column of the history rows.
func historyArgs(rows []*store.HistoryRow) []any {
	n := len(rows)
	ints := make([][]int64, 5)   // job_id, attempt, started_at, finished_at, delay
	texts := make([][]string, 6) // outcome, error, error_class, worker, kind, next_state
	for i := range ints {
		ints[i] = make([]int64, n)
	}
	for i := range texts {
		texts[i] = make([]string, n)
	}
	for i, h := range rows {
		ints[0][i], ints[1][i], ints[2][i], ints[3][i], ints[4][i] = h.JobID, int64(h.Attempt), h.StartedAt, h.FinishedAt, h.Delay
		for k, t := range []string{h.Outcome, h.Error, h.ErrorClass, h.Worker, h.Kind, h.Next} {
			texts[k][i] = store.StorableText(t)
		}
	}
	return []any{ints[0], ints[1], ints[2], ints[3], texts[0], texts[1], texts[2], ints[4], texts[3], texts[4], texts[5]}
}
