package store

import "context"

// The pauses of queues and kinds: rows of litequeue_paused, which every
// claim reads in its transaction.

// A PauseRow is a row of litequeue_paused: scope is "queue" or "kind".
type PauseRow struct {
	Scope string `db:"scope"`
	Name  string `db:"name"`
	Since int64  `db:"since"`
}

const (
	pauseSQL = `INSERT INTO litequeue_paused (scope, name, since) VALUES (?, ?, ?)
	ON CONFLICT (scope, name) DO NOTHING`
	resumeSQL = `DELETE FROM litequeue_paused WHERE scope = ? AND name = ?`
	// 'queue' sorts after 'kind': DESC lists the queues first.
	pausesSQL = `SELECT scope, name, since FROM litequeue_paused ORDER BY scope DESC, name`
)

// anyPausedSQL, a column of a read that a claim or an idle worker makes
// anyway, tells whether anything is paused, so that the pauses are read
// only when there are some.
const anyPausedSQL = `EXISTS (SELECT 1 FROM litequeue_paused)`

// Pause pauses the queue or kind name of scope since the given time,
// and reports whether it was not paused already (a second pause keeps
// the first's since).
func Pause(ctx context.Context, tx Execer, scope, name string, since int64) (bool, error) {
	return wrote(tx.ExecContext(ctx, pauseSQL, scope, name, since))
}

// Resume resumes the queue or kind name of scope, and reports whether it
// was paused.
func Resume(ctx context.Context, tx Execer, scope, name string) (bool, error) {
	return wrote(tx.ExecContext(ctx, resumeSQL, scope, name))
}

// Pauses reads what is paused: the queues first, each scope by name.
func Pauses(ctx context.Context, ex Execer) ([]PauseRow, error) {
	return selectAll[PauseRow](ctx, ex, pausesSQL)
}
