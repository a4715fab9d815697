package postgres

import (
	"context"
	"database/sql"

	"github.com/litequeue/litequeue/internal/store"
)

// pgSetHeldRowsSQL is store.SetHeldRow for every row of a batch in one
// statement: its arrays hold, for each row, its fence (id, token,
// created_at) and its values after the run. It returns the fence of each
// row it wrote, whole: a job may have two ends in one batch (a run that
// lost its lease and the run that claimed the job again, or the runs of
// the job before and after a restore gave its ID to a job of another
// created_at, under the same token), of which one holds.
const pgSetHeldRowsSQL = `UPDATE litequeue_jobs AS j
	SET state = v.state, attempt = v.attempt, run_at = v.run_at, finished_at = v.finished_at,
	    last_error = v.last_error, lease_until = 0, cancel = 0
	FROM unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[])
	     AS v(id, token, created_at, state, attempt, run_at, finished_at, last_error)
	WHERE j.id = v.id AND j.token = v.token AND j.created_at = v.created_at
	  AND j.state = 'running' AND j.cancel = 0
	RETURNING j.id, v.token, v.created_at`

// fence is a row's fence, as pgSetHeldRowsSQL returns those that held.
type fence struct {
	ID        int64 `db:"id"`
	Token     int64 `db:"token"`
	CreatedAt int64 `db:"created_at"`
}

// SetHeldRows writes every row that its lease still holds in one
// statement (pgSetHeldRowsSQL): one round trip for a batch of run ends.
func (e *Engine) SetHeldRows(ctx context.Context, tx store.Execer, rows []store.HeldRow) ([]bool, error) {
	n := len(rows)
	ids, tokens, created := make([]int64, n), make([]int64, n), make([]int64, n)
	states, errs := make([]string, n), make([]string, n)
	attempts, runAts, finishedAts := make([]int64, n), make([]*int64, n), make([]*int64, n)
	for i, r := range rows {
		a := r.After
		ids[i], tokens[i], created[i] = a.ID, r.Claimed.Token, r.Claimed.CreatedAt
		states[i], attempts[i], errs[i] = a.State, int64(a.Attempt), store.StorableText(a.LastError)
		runAts[i], finishedAts[i] = nullable(a.RunAt), nullable(a.FinishedAt)
	}
	var wrote []fence
	if err := tx.SelectContext(ctx, &wrote, pgSetHeldRowsSQL,
		ids, tokens, created, states, attempts, runAts, finishedAts, errs); err != nil {
		return nil, err
	}
	held := make(map[fence]bool, len(wrote))
	for _, f := range wrote {
		held[f] = true
	}
	out := make([]bool, n)
	for i := range rows {
		out[i] = held[fence{ids[i], tokens[i], created[i]}]
	}
	return out, nil
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
const pgAddHistorySQL = `INSERT INTO litequeue_attempts
	(job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state)
	SELECT h.job_id, h.attempt, h.started_at, h.finished_at, h.outcome, h.error, h.error_class,
	       h.delay, h.worker, h.kind, h.next_state
	FROM unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[],
	            ?::bigint[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY
	     AS h(job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state, n)
	ORDER BY h.n`

// AddHistory adds the rows in one statement (pgAddHistorySQL), whatever
// their number; none, none.
func (e *Engine) AddHistory(ctx context.Context, tx store.Execer, rows []*store.HistoryRow) error {
	if len(rows) == 0 {
		return nil
	}
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
	_, err := tx.ExecContext(ctx, pgAddHistorySQL, ints[0], ints[1], ints[2], ints[3],
		texts[0], texts[1], texts[2], ints[4], texts[3], texts[4], texts[5])
	return err
}
