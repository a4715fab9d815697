package store

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// What the per-kind limits count: the running jobs of a kind
// (MaxRunning), and the starts of its runs in a sliding window
// (RateLimit), rows of litequeue_starts.

const runningSQL = `SELECT kind, COUNT(*) AS n FROM litequeue_jobs
	WHERE state = 'running' AND kind IN (?) GROUP BY kind`

// Running counts the running jobs of each of kinds; a kind with none is
// missing from the map.
func Running(ctx context.Context, ex Execer, kinds []string) (map[string]int, error) {
	query, args, err := sqlx.In(runningSQL, kinds)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Kind string `db:"kind"`
		N    int    `db:"n"`
	}
	if err := ex.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	running := make(map[string]int, len(rows))
	for _, r := range rows {
		running[r.Kind] = r.N
	}
	return running, nil
}

// startsSQL reads, in one snapshot, how many starts of a kind lie in the
// window (from, to], and the n-th latest of them (NULL if fewer): once it
// leaves the window, the kind has room for one more.
const startsSQL = `SELECT COUNT(*) AS n,
	(SELECT started_at FROM litequeue_starts WHERE kind = ? AND started_at > ? AND started_at <= ?
	 ORDER BY started_at DESC LIMIT 1 OFFSET ?) AS nth
	FROM litequeue_starts WHERE kind = ? AND started_at > ? AND started_at <= ?`

const (
	pruneStartsSQL = `DELETE FROM litequeue_starts WHERE kind = ? AND (started_at <= ? OR started_at > ?)`
	addStartSQL    = `INSERT INTO litequeue_starts (kind, started_at) VALUES (?, ?)`
)

// Starts counts the starts of kind in the window (from, to], and returns
// the n-th latest of them, counting from 1; NULL if there are fewer.
// (Both come from one statement: outside a claim, another process's claim
// may prune the window between two.)
func Starts(ctx context.Context, ex Execer, kind string, from, to int64, n int) (int, sql.NullInt64, error) {
	var w struct {
		N   int           `db:"n"`
		Nth sql.NullInt64 `db:"nth"`
	}
	err := ex.GetContext(ctx, &w, startsSQL, kind, from, to, n-1, kind, from, to)
	return w.N, w.Nth, err
}

// PruneStarts deletes the starts of kind outside the window (from, to]:
// those that left it, and those of a clock that went back.
func PruneStarts(ctx context.Context, tx Execer, kind string, from, to int64) error {
	_, err := tx.ExecContext(ctx, pruneStartsSQL, kind, from, to)
	return err
}

// AddStart counts a start of kind at the given time.
func AddStart(ctx context.Context, tx Execer, kind string, at int64) error {
	_, err := tx.ExecContext(ctx, addStartSQL, kind, at)
	return err
}
