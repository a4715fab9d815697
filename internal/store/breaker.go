package store

import (
	"context"
	"errors"
)

// The circuit breakers of kinds: rows of litequeue_breakers, and the
// counts of a kind's runs in litequeue_attempts that open one.

// A BreakerRow is a row of litequeue_breakers, with the state of its
// probe's job ("" if none).
type BreakerRow struct {
	Kind        string `db:"kind"`
	State       string `db:"state"` // "open", "half_open" or "closed"
	OpenedAt    int64  `db:"opened_at"`
	OpenUntil   int64  `db:"open_until"` // closed: when it closed
	Trips       int    `db:"trips"`
	Probe       int64  `db:"probe"`
	Cooldown    int64  `db:"cooldown"`
	MaxCooldown int64  `db:"max_cooldown"`
	ProbeState  string `db:"probe_state"`
}

const breakerColumnsSQL = `SELECT b.kind, b.state, b.opened_at, b.open_until, b.trips, b.probe,
	b.cooldown, b.max_cooldown, COALESCE(j.state, '') AS probe_state
	FROM litequeue_breakers AS b LEFT JOIN litequeue_jobs AS j ON j.id = b.probe`

// openBreakersSQL reads the breakers that are not closed, in the order of
// their kinds, in which claims lock them.
const openBreakersSQL = breakerColumnsSQL + ` WHERE b.state <> 'closed' ORDER BY b.kind`

// breakerSQL reads the breaker of a kind, closed or not.
const breakerSQL = breakerColumnsSQL + ` WHERE b.kind = ?`

// OpenBreakers reads the breakers that are not closed, by kind.
func OpenBreakers(ctx context.Context, ex Execer) ([]BreakerRow, error) {
	return selectAll[BreakerRow](ctx, ex, openBreakersSQL)
}

// Breaker reads the breaker of kind; nil if it has no row (it never
// opened).
func Breaker(ctx context.Context, ex Execer, kind string) (*BreakerRow, error) {
	r := new(BreakerRow)
	if err := ex.GetContext(ctx, r, breakerSQL, kind); errors.Is(err, ErrNoRows) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return r, nil
}

// FailedSQL is true of the history rows of failed runs: what a breaker
// counts, and the runs before a retry. It is also the condition of the
// index litequeue_attempts_breaker, written as ORs (see schema.sql): for
// SQLite to use that index, a query must use this expression, its terms
// in this order.
const FailedSQL = `(outcome = 'failed' OR outcome = 'panicked' OR outcome = 'timed_out' OR outcome = 'lease_expired')`

// Failed reports whether a run of outcome failed, as FailedSQL says of a
// history row: the same outcomes, for code that holds the row.
func Failed(outcome string) bool {
	switch outcome {
	case "failed", "panicked", "timed_out", "lease_expired":
		return true
	}
	return false
}

// failedSinceSQL counts the failed runs of a kind since a moment, through
// litequeue_attempts_breaker (on PostgreSQL, litequeue_attempts_failed).
const failedSinceSQL = `SELECT COUNT(*) FROM litequeue_attempts
	WHERE kind = ? AND finished_at > ? AND ` + FailedSQL

// completedSinceSQL counts the completed runs of a kind since a moment,
// up to a limit.
const completedSinceSQL = `SELECT COUNT(*) FROM (SELECT 1 FROM litequeue_attempts
	WHERE finished_at > ? AND kind = ? AND outcome = 'completed' LIMIT ?) AS c`

// FailedSince counts the failed runs of kind that finished after since.
func FailedSince(ctx context.Context, ex Execer, kind string, since int64) (int, error) {
	var n int
	err := ex.GetContext(ctx, &n, failedSinceSQL, kind, since)
	return n, err
}

// CompletedSince counts the completed runs of kind that finished after
// since, up to limit.
func CompletedSince(ctx context.Context, ex Execer, kind string, since, limit int64) (int, error) {
	var n int
	err := ex.GetContext(ctx, &n, completedSinceSQL, since, kind, limit)
	return n, err
}

const (
	// openBreakerSQL opens a closed breaker, with or without a row; one
	// that another transaction opened meanwhile stays as it is.
	openBreakerSQL = `INSERT INTO litequeue_breakers
	(kind, state, opened_at, open_until, trips, probe, cooldown, max_cooldown)
	VALUES (?, 'open', ?, ?, 1, 0, ?, ?)
	ON CONFLICT (kind) DO UPDATE SET state = 'open', opened_at = excluded.opened_at,
		open_until = excluded.open_until, trips = 1, probe = 0,
		cooldown = excluded.cooldown, max_cooldown = excluded.max_cooldown
	WHERE litequeue_breakers.state = 'closed'`
	reopenBreakerSQL = `UPDATE litequeue_breakers
	SET state = 'open', open_until = ?, trips = ?, probe = 0, cooldown = ?
	WHERE kind = ?`
	// closeBreakerSQL closes a breaker that is not closed, at a moment:
	// its failures count from then on.
	closeBreakerSQL = `UPDATE litequeue_breakers SET state = 'closed', open_until = ?, trips = 0, probe = 0
	WHERE kind = ? AND state <> 'closed'`
	probeBreakerSQL = `UPDATE litequeue_breakers SET state = 'half_open', probe = ? WHERE kind = ?`
)

// OpenBreaker opens the closed breaker of kind at the given time until
// until, with its cool-downs, and reports whether it was closed (another
// transaction may have opened it meanwhile: then it stays as it is).
func OpenBreaker(ctx context.Context, tx Execer, kind string, at, until, cooldown, maxCooldown int64) (bool, error) {
	return wrote(tx.ExecContext(ctx, openBreakerSQL, kind, at, until, cooldown, maxCooldown))
}

// ReopenBreaker opens the breaker of kind again until until, after its
// probe failed or was lost, with its trips and cool-down.
func ReopenBreaker(ctx context.Context, tx Execer, kind string, until int64, trips int, cooldown int64) error {
	_, err := tx.ExecContext(ctx, reopenBreakerSQL, until, trips, cooldown, kind)
	return err
}

// CloseBreaker closes the breaker of kind at the given time, and reports
// whether it was not closed.
func CloseBreaker(ctx context.Context, tx Execer, kind string, at int64) (bool, error) {
	return wrote(tx.ExecContext(ctx, closeBreakerSQL, at, kind))
}

// ProbeBreaker makes the breaker of kind half-open, its probe the job.
func ProbeBreaker(ctx context.Context, tx Execer, kind string, job int64) error {
	_, err := tx.ExecContext(ctx, probeBreakerSQL, job, kind)
	return err
}
