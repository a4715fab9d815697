package litequeue

import (
	"context"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
)

// Claims: a worker takes due jobs of the kinds it handles by leasing them
// (see lease), in priority, then RunAt, then ID order.

// claimSQL walks the claim index in claim order and stops at the limit.
// INDEXED BY is SQLite's: without statistics its planner prefers the
// (kind, run_at) index for "kind IN (…)" and then sorts every due job on
// each claim. On PostgreSQL the clause is dropped (and FOR UPDATE SKIP
// LOCKED added).
const claimSQL = `SELECT ` + jobColumns + ` FROM litequeue_jobs INDEXED BY litequeue_jobs_claim
	WHERE state = 'pending' AND run_at <= ? AND kind IN (?)`

const claimOrderSQL = ` ORDER BY priority DESC, run_at, id LIMIT ` + limitParam

// limitParam is a LIMIT whose value changes from call to call. SQLite
// plans a plain "LIMIT ?" with the value bound at the time, and so
// compiles the statement again each time the value changes: for the
// claim, whose limit is the number of free workers, that was a parse and
// plan per claim. A cast is not a plain parameter, so the plan holds for
// every value.
const limitParam = `CAST(? AS INTEGER)`

// claimUpdateSQL leases every claimed row in one statement, whatever
// their number: its one argument of its own is a JSON array with, for
// each row, [id, attempt, token, max_tries, retry_delay] (the values that
// differ from row to row). On PostgreSQL, unnest over arrays takes the
// place of json_each.
const claimUpdateSQL = `UPDATE litequeue_jobs
	SET state = 'running', attempt = l.value ->> 1, token = l.value ->> 2, lease_until = ?,
	    started_at = ?, worker = ?, max_tries = l.value ->> 3, retry_delay = l.value ->> 4, cancel = 0
	FROM json_each(?) AS l
	WHERE litequeue_jobs.id = l.value ->> 0`

// claimer says which jobs a worker takes, and the name it records.
type claimer struct {
	queues []string // nil: every queue
	worker string
}

// claim leases up to limit due jobs of the kinds this Queue handles, from
// the claimer's queues, in priority, then RunAt, then ID order, and fires
// job.started for each after the commit.
func (q *Queue) claim(ctx context.Context, c claimer, limit int) ([]*lease, error) {
	var leases []*lease
	var now time.Time
	err := q.submit(&writeOp{ctx: ctx, light: true, fn: func(tx execer) (err error) {
		now = q.now()
		leases, err = q.claimTx(ctx, tx, c, limit, now)
		return err
	}})
	if err != nil {
		return nil, err
	}
	q.hold(leases...)
	q.emit(startedEvents(leases, now)...)
	return leases, nil
}

// A claimAsk asks for one job for a claimer, to be claimed in the
// transaction of the write it comes with (a finished run's, see finish).
// The writer serves all the asks of a batch at once (see serve): the
// workers that finish together share one claim, as they share one commit.
type claimAsk struct {
	c   *claimer
	got *lease    // the job claimed, if one was due
	at  time.Time // when it was claimed
}

// serve is the writer's perBatch: it claims the jobs the asks of a batch
// want (each join is a *claimAsk) in tx: for each claimer, one claim for
// as many jobs as it has asks, handed out in the asks' order; an ask left
// without one gets nil.
func (q *Queue) serve(ctx context.Context, tx execer, joins []any) error {
	now := q.now()
	var claimers []*claimer
	byClaimer := make(map[*claimer][]*claimAsk)
	for _, j := range joins {
		a := j.(*claimAsk)
		a.got, a.at = nil, now
		if _, ok := byClaimer[a.c]; !ok {
			claimers = append(claimers, a.c)
		}
		byClaimer[a.c] = append(byClaimer[a.c], a)
	}
	for _, c := range claimers {
		same := byClaimer[c]
		leases, err := q.claimTx(ctx, tx, *c, len(same), now)
		if err != nil {
			return err
		}
		for i, l := range leases {
			same[i].got = l
		}
	}
	return nil
}

// claimTx leases up to limit due jobs in tx at time now.
func (q *Queue) claimTx(ctx context.Context, tx execer, c claimer, limit int, now time.Time) ([]*lease, error) {
	kinds := q.kinds()
	if len(kinds) == 0 || limit <= 0 {
		return nil, nil
	}
	query, args := claimSQL, []any{ms(now), kinds}
	if len(c.queues) > 0 {
		query += ` AND queue IN (?)`
		args = append(args, c.queues)
	}
	query, args, err := sqlx.In(query+claimOrderSQL, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	var rows []jobRow
	if err := tx.SelectContext(ctx, &rows, tx.Rebind(query), args...); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	leases := make([]*lease, len(rows))
	for i := range rows {
		leases[i] = q.lease(&rows[i], c.worker, now)
	}
	// claimUpdateSQL's array: for each row, the values that differ.
	values := appendJSONArray(make([]byte, 0, 64*len(leases)), len(leases), func(b []byte, i int) []byte {
		r := &leases[i].row
		v := [...]int64{r.ID, int64(r.Attempt), r.Token, int64(r.MaxTries), r.RetryDelay}
		return appendJSONArray(b, len(v), func(b []byte, j int) []byte { return strconv.AppendInt(b, v[j], 10) })
	})
	r := &leases[0].row
	if _, err := tx.ExecContext(ctx, claimUpdateSQL, r.LeaseUntil, r.StartedAt, r.Worker, string(values)); err != nil {
		return nil, err
	}
	return leases, nil
}

// lease turns one claimed pending row into a running one under a new
// token, and returns the lease with the row as it is once claimTx has
// written it.
func (q *Queue) lease(row *jobRow, worker string, now time.Time) *lease {
	h := q.handler(row.Kind)
	delay := h.policy.Delay(row.Attempt+1, q.rand())
	if row.OwnMaxTries == 0 {
		row.MaxTries = h.policy.MaxTries
	}
	row.State, row.Attempt, row.Token, row.Cancel = Running, row.Attempt+1, row.Token+1, false
	row.LeaseUntil, row.StartedAt = ms(now.Add(q.opts.VisibilityTimeout)), ms(now)
	row.Worker, row.RetryDelay = worker, delay.Milliseconds()
	return &lease{row: *row, job: row.job(), h: h, started: now, worker: worker, renewNow: make(chan struct{}, 1)}
}

