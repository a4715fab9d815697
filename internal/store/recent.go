package store

import (
	"cmp"
	"context"
	"slices"
)

// The last hour's failures, without an index of the history by
// finished_at (schema.sql, version 6): they are read through the index of
// failed runs by kind and finished_at (litequeue_attempts_breaker; on
// PostgreSQL, litequeue_attempts_failed), one range per kind that has
// failed runs, so that a read costs the kinds and the failures of its
// window, not every run. Every death is a failed run too: a job goes dead
// only at the end of a run that failed (see route in the root's
// decide.go), so the deaths' condition repeats FailedSQL, which the index
// needs, and counts what it counted without it. The reads are exact
// whatever the clocks that wrote finished_at.

// failedKindsSQL reads the kinds that have failed runs, sorted: one probe
// of the index of failed runs each.
const failedKindsSQL = `WITH RECURSIVE fk(name) AS (
	SELECT (SELECT kind FROM litequeue_attempts WHERE ` + FailedSQL + ` ORDER BY kind LIMIT 1)
	UNION ALL
	SELECT (SELECT kind FROM litequeue_attempts WHERE ` + FailedSQL + ` AND kind > fk.name ORDER BY kind LIMIT 1)
	FROM fk WHERE fk.name IS NOT NULL)
	SELECT name FROM fk WHERE name IS NOT NULL`

// perFailedKind runs query, whose arguments are a kind and since, for
// each kind that has failed runs, and returns their rows together. A
// statement per kind, not one join: PostgreSQL's planner, which cannot
// know how few kinds there are, would rather read the whole index for the
// finished_at of its second column.
func perFailedKind[T any](ctx context.Context, db Execer, query string, since int64) ([]T, error) {
	kinds, err := selectAll[string](ctx, db, failedKindsSQL)
	if err != nil {
		return nil, err
	}
	var all []T
	for _, kind := range kinds {
		rows, err := selectAll[T](ctx, db, query, kind, since)
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
}

// classCounts sorts rows most first, then by kind and error class.
func classCounts(rows []ClassCount, err error) ([]ClassCount, error) {
	slices.SortFunc(rows, func(a, b ClassCount) int {
		return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Class, b.Class))
	})
	return rows, err
}

// failureRows sorts rows by minute, kind and error class.
func failureRows(rows []FailureRow, err error) ([]FailureRow, error) {
	slices.SortFunc(rows, func(a, b FailureRow) int {
		return cmp.Or(cmp.Compare(a.Minute, b.Minute), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Class, b.Class))
	})
	return rows, err
}
