package litequeue

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// Due times: when a worker next has something to do, read cheaply enough
// to poll. Work and NextDue read them; RunDue claims what they show due.

// NextDue reports the earliest moment [Queue.RunDue] would have work: the
// [Job.RunAt] of a pending job of a kind with a handler on this [Queue], or
// the lease expiry of a running job, whichever is first. ok is false when
// there is neither. The time may lie in the past: the work is due now.
func (q *Queue) NextDue(ctx context.Context) (time.Time, bool, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	defer leave()
	due, err := q.nextDue(ctx, nil)
	if err != nil {
		return time.Time{}, false, err
	}
	next := store.MinNull(due.pending, due.lease)
	next = store.MinNull(next, q.sched.next())
	return store.NullTime(next), next.Valid, nil
}

// dueTimes are the next moments a worker has something to do.
type dueTimes struct {
	pending sql.NullInt64 // earliest RunAt of a claimable job
	lease   sql.NullInt64 // earliest lease expiry of a running job
	far     sql.NullInt64 // latest lease expiry of a running job
}

// needsRescue reports whether a lease has expired at now, or lies further
// ahead than any renewal could have set it: the clock went back.
func (d dueTimes) needsRescue(now time.Time, visibility time.Duration) bool {
	return d.lease.Valid && d.lease.Int64 <= store.MS(now) ||
		d.far.Valid && d.far.Int64 > store.MS(now.Add(visibility))
}

const nextPendingSQL = `SELECT MIN(run_at) FROM litequeue_jobs WHERE state = 'pending' AND kind = ?`

// nextLeaseSQL reads the earliest and latest lease expiry, and whether
// anything is paused, for the gate (see gate); nextLeaseOnlySQL, for a
// file of an older schema without pauses (see flowTables), only the first
// two.
const (
	nextLeaseSQL     = leaseTimes + `, ` + store.AnyPausedSQL + ` AS paused` + leaseRows
	nextLeaseOnlySQL = leaseTimes + leaseRows

	leaseTimes = `SELECT MIN(lease_until) AS earliest, MAX(lease_until) AS latest`
	leaseRows  = ` FROM litequeue_jobs WHERE state = 'running'`
)

// nextDue reads dueTimes for the handled kinds and the given queues (nil:
// all), as the gate (gate.go) lets a claim take them now: a shut kind's
// jobs are not due until it opens. It only reads, through indexes: one
// lookup per kind and one for leases, cheap enough to poll.
func (q *Queue) nextDue(ctx context.Context, queues []string) (dueTimes, error) {
	var due dueTimes
	var leases struct {
		Earliest sql.NullInt64 `db:"earliest"`
		Latest   sql.NullInt64 `db:"latest"`
		Paused   bool          `db:"paused"`
	}
	query := nextLeaseSQL
	if !q.st.info.Flow {
		query = nextLeaseOnlySQL
	}
	if err := q.st.reads.GetContext(ctx, &leases, query); err != nil {
		return due, err
	}
	due.lease, due.far = leases.Earliest, leases.Latest
	g, err := q.gate.admit(ctx, q.st.reads, q.reg.kinds(), q.now(), false, leases.Paused)
	if err != nil {
		return due, err
	}
	for _, kind := range g.kinds {
		query, args := nextPendingSQL, []any{kind}
		if len(queues) > 0 {
			query, args = query+` AND queue IN (?)`, append(args, queues)
		}
		if len(g.paused) > 0 {
			query, args = query+` AND queue NOT IN (?)`, append(args, g.paused)
		}
		if len(args) > 1 {
			if query, args, err = sqlx.In(query, args...); err != nil {
				return due, err
			}
		}
		var t sql.NullInt64
		if err := q.st.reads.GetContext(ctx, &t, query, args...); err != nil {
			return due, err
		}
		due.pending = store.MinNull(due.pending, t)
	}
	if !g.opens.IsZero() {
		due.pending = store.MinNull(due.pending, sql.NullInt64{Int64: store.MS(g.opens), Valid: true})
	}
	return due, nil
}
