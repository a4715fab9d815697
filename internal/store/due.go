package store

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// Due times' statements: when a worker next has something to do, read
// cheaply enough to poll, through indexes. Which kinds and queues a worker
// may take the root decides (its gate).

// nextPendingSQL reads a kind's earliest RunAt through the claim index
// (kind, priority DESC, run_at, id): it walks the kind's priorities
// (pendingPriorities, as Stats does), one probe each, and reads the first
// RunAt of each, where the queue filter goes (nextPendingEnd). Its work
// is bounded by the number of priorities the kind's pending jobs have,
// not by their number — but for a queue filter, which steps over the
// kind's earlier jobs of other queues.
const nextPendingSQL = `WITH RECURSIVE k(kind) AS (SELECT CAST(? AS text)),
	` + pendingPriorities + `
	SELECT MIN((SELECT run_at FROM litequeue_jobs
		WHERE state = 'pending' AND kind = pr.kind AND priority = pr.v`

const nextPendingEnd = ` ORDER BY run_at LIMIT 1)) FROM pr WHERE pr.v IS NOT NULL`

// nextLeaseSQL reads the earliest and latest lease expiry, and whether
// anything is paused; nextLeaseOnlySQL, for a file of an older schema
// without pauses (see Info.Flow), only the first two.
const (
	nextLeaseSQL     = leaseTimes + `, ` + anyPausedSQL + ` AS paused` + leaseRows
	nextLeaseOnlySQL = leaseTimes + leaseRows

	leaseTimes = `SELECT MIN(lease_until) AS earliest, MAX(lease_until) AS latest`
	leaseRows  = ` FROM litequeue_jobs WHERE state = 'running'`
)

// LeaseTimes are the earliest and latest lease expiries of the running
// jobs (NULL: none runs), and whether anything is paused.
type LeaseTimes struct {
	Earliest sql.NullInt64 `db:"earliest"`
	Latest   sql.NullInt64 `db:"latest"`
	Paused   bool          `db:"paused"`
}

// ReadLeaseTimes reads the LeaseTimes, in one read through the lease
// index. flow says that the database has the tables of flow control
// (Info.Flow); without them nothing is paused.
func ReadLeaseTimes(ctx context.Context, db Execer, flow bool) (LeaseTimes, error) {
	var t LeaseTimes
	query := nextLeaseSQL
	if !flow {
		query = nextLeaseOnlySQL
	}
	err := db.GetContext(ctx, &t, query)
	return t, err
}

// NextPending returns the earliest RunAt of a pending job of kind, on one
// of the queues (nil: any) and on none of paused; NULL if there is none.
// It is a lookup in the claim index per priority of the kind's pending
// jobs.
func NextPending(ctx context.Context, db Execer, kind string, queues, paused []string) (sql.NullInt64, error) {
	var t sql.NullInt64
	query, args := nextPendingSQL, []any{kind}
	if len(queues) > 0 {
		query, args = query+` AND queue IN (?)`, append(args, queues)
	}
	if len(paused) > 0 {
		query, args = query+` AND queue NOT IN (?)`, append(args, paused)
	}
	query += nextPendingEnd
	if len(args) > 1 {
		var err error
		if query, args, err = sqlx.In(query, args...); err != nil {
			return t, err
		}
	}
	err := db.GetContext(ctx, &t, query, args...)
	return t, err
}
