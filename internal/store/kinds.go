package store

import "context"

// The kinds handled on a database: a row of litequeue_kinds per kind that
// a Work or RunDue of any process has had a handler for, which an enqueue
// with Options.RefuseUnknownKinds reads.

const (
	// last_seen only moves forward: a clock set back leaves it.
	recordKindSQL = `INSERT INTO litequeue_kinds (kind, first_seen, last_seen) VALUES (?, ?, ?)
	ON CONFLICT (kind) DO UPDATE SET last_seen = excluded.last_seen
	WHERE litequeue_kinds.last_seen < excluded.last_seen`
	handledKindsSQL = `SELECT kind, first_seen, last_seen FROM litequeue_kinds ORDER BY kind`
)

// RecordKinds records in tx that kinds are handled, seen at now: a new
// kind is first seen then, a known one keeps its first sighting and is
// last seen then, unless it was seen later already.
func RecordKinds(ctx context.Context, tx Execer, kinds []string, now int64) error {
	for _, kind := range kinds {
		if _, err := tx.ExecContext(ctx, recordKindSQL, kind, now, now); err != nil {
			return err
		}
	}
	return nil
}

// A KindRow is a row of litequeue_kinds.
type KindRow struct {
	Kind      string `db:"kind"`
	FirstSeen int64  `db:"first_seen"`
	LastSeen  int64  `db:"last_seen"`
}

// HandledKinds reads the kinds recorded as handled, by kind.
func HandledKinds(ctx context.Context, ex Execer) ([]KindRow, error) {
	return selectAll[KindRow](ctx, ex, handledKindsSQL)
}
