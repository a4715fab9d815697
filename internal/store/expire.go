package store

import "context"

// Expiry's statements: litequeue_jobs.expires_at holds the moment by which
// a pending job must have started. The root decides what an expired job
// becomes; these find the jobs whose moment has come.

// dueExpirySQL finds pending jobs whose expiry has come, through the
// expiry index: with none, one empty probe. The row lock keeps a server's
// claim in another transaction from taking a row this one expires.
const dueExpirySQL = `SELECT ` + JobColumns + ` FROM litequeue_jobs INDEXED BY litequeue_jobs_expiry
	WHERE state = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?
	ORDER BY expires_at, id LIMIT ` + LimitParam + ` /*FOR UPDATE SKIP LOCKED*/`

// anyExpirySQL tells whether a pending job's expiry has come, without a
// lock.
const anyExpirySQL = `SELECT id FROM litequeue_jobs
	WHERE state = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? LIMIT 1`

// DueExpiries returns up to limit pending jobs whose expiry is at or
// before now, earliest expiry first, for tx to expire. On a server it
// locks their rows and skips those another transaction holds (a claim or
// another expiry under way); the file's writers take turns.
func DueExpiries(ctx context.Context, tx Execer, now int64, limit int) ([]JobRow, error) {
	return selectAll[JobRow](ctx, tx, dueExpirySQL, now, limit)
}

// ExpiryDue reports whether the expiry of a pending job has come at now.
// It takes no lock, and with no such job it is one empty probe of the
// expiry index.
func ExpiryDue(ctx context.Context, db Execer, now int64) (bool, error) {
	var found []int64
	err := db.SelectContext(ctx, &found, anyExpirySQL, now)
	return len(found) > 0, err
}
