package store

import (
	"context"
	"errors"
)

// Rescue's statements: a lease that expired is a lost run, which any
// process rescues. The look through the expired leases (ExpiredLeases)
// reads them without taking their rows: most of what a Work loop sees
// expired it does not rescue yet, and on a server a row it held would turn
// away the live holder's renewal (which skips a row held elsewhere) at the
// moment the renewal proves the holder alive. Only a lease it rescues does
// the rescuer take, as it saw it (LockExpired). What a rescued job becomes
// the root decides.

const clampLeasesSQL = `UPDATE litequeue_jobs SET lease_until = ?
	WHERE state = 'running' AND lease_until > ?`

const expiredSQL = `SELECT ` + JobColumns + ` FROM litequeue_jobs
	WHERE state = 'running' AND lease_until <= ?
	ORDER BY lease_until LIMIT ` + LimitParam

// lockExpiredSQL takes the row of an expired lease the look found, if it
// is as the look found it: not renewed, settled or rescued since, and not
// held by another transaction (which is settling or rescuing it).
const lockExpiredSQL = `SELECT ` + JobColumns + ` FROM litequeue_jobs
	WHERE id = ? AND token = ? AND lease_until = ? AND state = 'running' /*FOR UPDATE SKIP LOCKED*/`

// ClampLeases cuts, in tx, every running job's lease that ends after
// until to end at until.
func ClampLeases(ctx context.Context, tx Execer, until int64) error {
	_, err := tx.ExecContext(ctx, clampLeasesSQL, until, until)
	return err
}

// ExpiredLeases returns up to limit running jobs whose lease ended at or
// before now, the earliest ended first. It takes none of their rows.
func ExpiredLeases(ctx context.Context, tx Execer, now int64, limit int) ([]JobRow, error) {
	return selectAll[JobRow](ctx, tx, expiredSQL, now, limit)
}

// LockExpired takes, in tx, the row of the expired lease seen as seen, and
// returns it as it is; nil if it changed since (renewed, settled, or
// rescued and claimed again), or, on a server, if another transaction
// holds it.
func LockExpired(ctx context.Context, tx Execer, seen *JobRow) (*JobRow, error) {
	row := new(JobRow)
	err := tx.GetContext(ctx, row, lockExpiredSQL, seen.ID, seen.Token, seen.LeaseUntil)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return row, nil
}
