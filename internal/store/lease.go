package store

import (
	"context"
	"errors"
)

// A lease's renewal: the holder of a running job's lease moves its expiry
// on, fenced by the lease's token.

// renewSQL takes its row only if no other transaction holds it: on a
// server, the handler's own CompleteTx may hold it, in the app's
// transaction, and a renewal waiting for it would hold up the whole batch
// it shares a commit with (and could close a cycle of waits with the
// app's other locks). heldSQL then tells a row held elsewhere from a lease
// lost.
const renewSQL = `UPDATE litequeue_jobs SET lease_until = ?
	WHERE id = (SELECT id FROM litequeue_jobs
	            WHERE id = ? AND token = ? AND created_at = ? AND state = 'running' /*FOR UPDATE SKIP LOCKED*/)
	RETURNING cancel`

// heldSQL reports whether the lease is still current.
const heldSQL = `SELECT EXISTS (SELECT 1 FROM litequeue_jobs
	WHERE id = ? AND token = ? AND created_at = ? AND state = 'running')`

// completedUnderSQL reports whether the job is completed under the token:
// CompleteTx committed it.
const completedUnderSQL = `SELECT EXISTS (SELECT 1 FROM litequeue_jobs
	WHERE id = ? AND token = ? AND created_at = ? AND state = 'completed')`

// A Renewal is what renewing a lease found.
type Renewal int

// The renewals.
const (
	Renewed   Renewal = iota // the lease holds, and now until the new time
	Busy                     // another transaction holds the row (a server): renewed next time
	Lost                     // the job no longer runs under the lease
	Completed                // the job completed under the lease (CompleteTx)
)

// Renew moves the expiry of the lease of token on the job id, made at
// created, to until, and reports what it found, and whether Cancel asked
// the job to stop (the lease is renewed all the same).
func Renew(ctx context.Context, tx Execer, id, token, created, until int64) (r Renewal, cancel bool, err error) {
	err = tx.GetContext(ctx, &cancel, renewSQL, until, id, token, created)
	if !errors.Is(err, ErrNoRows) {
		return Renewed, cancel, err
	}
	var held, completed bool
	if err := tx.GetContext(ctx, &held, heldSQL, id, token, created); err != nil || held {
		return Busy, false, err
	}
	if err := tx.GetContext(ctx, &completed, completedUnderSQL, id, token, created); err != nil || !completed {
		return Lost, false, err
	}
	return Completed, false, nil
}
