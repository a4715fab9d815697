package store

import "context"

// The reads of a database's health (Queue.Health): the rows of
// litequeue's tables, counted alike on every engine, and what an engine
// finds of its own database (Engine.Health).

const (
	jobsByStateSQL = `SELECT state, COUNT(*) AS n FROM litequeue_jobs GROUP BY state`
	historyRowsSQL = `SELECT COUNT(*) FROM litequeue_attempts`
	keyRowsSQL     = `SELECT COUNT(*) FROM litequeue_keys`
)

// StateTotal is a row of JobsByState: how many jobs are in one state.
type StateTotal struct {
	State string `db:"state"`
	N     int    `db:"n"`
}

// JobsByState counts on db the jobs in each state, of every queue; a
// state no job is in has no row.
func JobsByState(ctx context.Context, db Execer) ([]StateTotal, error) {
	return selectAll[StateTotal](ctx, db, jobsByStateSQL)
}

// HistoryRows counts on db the rows of history, of every job.
func HistoryRows(ctx context.Context, db Execer) (int, error) {
	var n int
	err := db.GetContext(ctx, &n, historyRowsSQL)
	return n, err
}

// KeyRows counts on db the idempotency keys, the expired ones not yet
// purged included.
func KeyRows(ctx context.Context, db Execer) (int, error) {
	var n int
	err := db.GetContext(ctx, &n, keyRowsSQL)
	return n, err
}

// Health is what an engine found of its own database (see
// Engine.Health). On a server only SchemaVersion and ReadProblems are
// set: the rest is a file's.
type Health struct {
	Integrity     []string // what SQLite's integrity check reports: ["ok"] for a sound file
	SchemaVersion int      // litequeue's schema version in the database
	ApplicationID int64    // the file's application_id: litequeue's, or 0
	JournalMode   string   // "wal"; "delete" for a copy, such as a VACUUM INTO backup
	Backup        bool     // a copy at rest, in journal mode delete
	FileBytes     int64    // the size of the database file
	WALBytes      int64    // the size of its -wal file; 0 when there is none
	// ReadProblems are what the engine's reads found wrong, in the order
	// read; FileProblems what is wrong with the files on disk, which
	// Queue.Health lists after the problems of its counts.
	ReadProblems []string
	FileProblems []string
	Warnings     []string // what may need a look but is not wrong
	// Explain says what happened, and what to do, when a read failed as
	// a file whose -wal was cut short makes it fail; "" otherwise.
	// Queue.Health puts it first among the problems.
	Explain string
}
