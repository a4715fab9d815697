package litequeue

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
)

// A lease is a worker's claim on one running job. Its fencing token is the
// job's token at claim time: every later write by the holder checks it, so a
// holder whose lease expired (and whose job another worker rescued and
// claimed again) changes nothing and gets ErrLeaseLost.
//
// At claim time the worker writes what a rescuer needs should the run be
// lost — the effective MaxTries and the delay to apply (retry_delay) — so
// any process can rescue the job without knowing its handler or policy. The
// same delay is applied if the run fails by returning an error (see
// decide).
type lease struct {
	row     jobRow // the job's row as claimed: still its row while the lease holds
	job     *Job
	h       *handler
	started time.Time
	worker  string
	// renewNow, sent to without blocking, asks the run to renew its lease
	// at once rather than at its next turn: Cancel in this Queue uses it so
	// that the run sees the request without waiting for the renewal.
	renewNow chan struct{}
}

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

// hold records that runs of this Queue hold the leases, from the commit of
// their claim until execute returns (see unhold). rescue leaves such a
// lease alone however expired it looks: its holder is alive, in this
// process, and renews it. A lease looks expired while its holder lives
// when the clock jumps: forward past the lease, or, with a mock clock whose
// timers move with it, back (the renewal then waits for the clock to catch
// up, while the rescue cut the lease to one timeout).
func (q *Queue) hold(leases ...*lease) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	for _, l := range leases {
		q.held[l.job.ID] = l
	}
}

// unhold forgets the lease: its run has ended, been recorded or been
// abandoned, and the job is anyone's to rescue again.
func (q *Queue) unhold(l *lease) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	if q.held[l.job.ID] == l {
		delete(q.held, l.job.ID)
	}
}

// holds reports whether a run of this Queue holds the job's lease under
// the token.
func (q *Queue) holds(id, token int64) bool {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	l, ok := q.held[id]
	return ok && l.job.token == token
}

// renewNow asks the run of this Queue that holds the job's lease, if one
// does, to renew the lease at once.
func (q *Queue) renewNow(id int64) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	if l, ok := q.held[id]; ok {
		select {
		case l.renewNow <- struct{}{}:
		default: // a renewal is asked for already
		}
	}
}

// holding returns how many leases this Queue's runs hold.
func (q *Queue) holding() int {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	return len(q.held)
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

const renewSQL = `UPDATE litequeue_jobs SET lease_until = ?
	WHERE id = ? AND token = ? AND created_at = ? AND state = 'running'
	RETURNING cancel`

// completedUnderSQL reports whether the job is completed under the token:
// CompleteTx committed it.
const completedUnderSQL = `SELECT EXISTS (SELECT 1 FROM litequeue_jobs
	WHERE id = ? AND token = ? AND created_at = ? AND state = 'completed')`

// errCompletedTx is what renew returns when CompleteTx committed the run:
// no lease is left to renew, and none was lost.
var errCompletedTx = errors.New("litequeue: completed through CompleteTx")

// renew extends the lease by VisibilityTimeout. It returns ErrLeaseLost if
// the lease is no longer held, errCompletedTx if CompleteTx completed the
// job under it, and errCancelRequested if Cancel asked the job to stop (the
// lease is still renewed: the run's outcome is recorded by its holder).
func (q *Queue) renew(ctx context.Context, l *lease) error {
	var cancel, gone, completed bool
	err := q.submit(&writeOp{ctx: ctx, light: true, fn: func(tx execer) error {
		cancel, gone, completed = false, false, false
		until := q.now().Add(q.opts.VisibilityTimeout)
		id, token, created := l.job.ID, l.job.token, ms(l.job.CreatedAt)
		err := tx.GetContext(ctx, &cancel, renewSQL, ms(until), id, token, created)
		if !errors.Is(err, errNoRows) {
			return err
		}
		gone = true
		return tx.GetContext(ctx, &completed, completedUnderSQL, id, token, created)
	}})
	switch {
	case err != nil:
		return err
	case completed:
		return errCompletedTx
	case gone:
		return ErrLeaseLost
	case cancel:
		return errCancelRequested
	}
	return nil
}

const expiredSQL = `SELECT ` + jobColumns + ` FROM litequeue_jobs
	WHERE state = 'running' AND lease_until <= ?
	ORDER BY lease_until LIMIT ` + limitParam

// rescueBatch bounds the expired leases one rescue transaction handles.
const rescueBatch = 256

const clampLeasesSQL = `UPDATE litequeue_jobs SET lease_until = ?
	WHERE state = 'running' AND lease_until > ?`

// rescue turns every expired lease into a lease_expired attempt: back to
// pending after the delay the claimer chose, or dead if it was the last
// try. It needs no handler. It returns how many jobs it rescued. It leaves
// alone the leases this Queue's own runs hold (see hold).
//
// A lease that ends further ahead than VisibilityTimeout from now can only
// come from a clock that went back (a device that booted in 1970 and then
// synced, or the reverse). Such a lease is not trusted until its far end:
// it is cut to end VisibilityTimeout from now, so a live holder keeps it by
// renewing as usual and a dead one's job comes back within one timeout.
//
// With sightings (Work), a lease is rescued only once it has been seen
// expired for confirmWait (see sightings); without (RunDue), at once.
func (q *Queue) rescue(ctx context.Context, seen *sightings) (int, error) {
	if seen != nil {
		seen.begin()
		defer seen.end()
	}
	total := 0
	for {
		var events []Event
		more := false
		err := q.write(ctx, func(tx execer) error {
			events = events[:0]
			now := q.now()
			limit := ms(now.Add(q.opts.VisibilityTimeout))
			if _, err := tx.ExecContext(ctx, clampLeasesSQL, limit, limit); err != nil {
				return err
			}
			// Room for the rows that are skipped: those of our own leases,
			// and those seen expired too recently to rescue.
			batch := rescueBatch + q.holding() + seen.waiting()
			var rows []jobRow
			if err := tx.SelectContext(ctx, &rows, expiredSQL, ms(now), batch); err != nil {
				return err
			}
			more = len(rows) == batch
			for i := range rows {
				r := &rows[i]
				if q.holds(r.ID, r.Token) {
					continue
				}
				if seen != nil && !seen.confirmed(r, now, confirmWait(q.opts.VisibilityTimeout)) {
					continue
				}
				d := decide(r, end{kind: endExpired, started: fromMS(r.StartedAt), worker: r.Worker}, now)
				if err := store(ctx, tx, &d); err != nil {
					return err
				}
				ev := d.event
				events = append(events, ev)
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		for _, ev := range events {
			q.opts.Logger.Warn("litequeue: rescued an expired lease", "job", ev.Job.ID, "kind", ev.Job.Kind, "state", ev.Job.State)
		}
		q.emit(events...)
		total += len(events)
		if !more || len(events) == 0 {
			if total > 0 {
				q.notify()
			}
			return total, nil
		}
	}
}
