package postgres

import (
	"context"
	"crypto/md5"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// The migration of litequeue's tables on a PostgreSQL server, to
// schema.sql of pgSchemaVersion (engine.go); that of the file
// is the file engine's (store/sqlite/migrate.go).

// A pgStep takes tables of version v to v+1 (pgSteps[v]) where running the
// whole of schema.sql again would lock more than the change
// needs: its ALTER TABLEs take the jobs table's ACCESS EXCLUSIVE lock, and
// each CREATE INDEX a SHARE lock, which stops every write to the table for
// the whole build; in one transaction both are held until it commits. A
// step runs the schema's own statements for its change, named by how they
// begin: those of tx in one transaction, then, outside any (where they
// must run), it builds each index of indexes with CREATE INDEX
// CONCURRENTLY, whose lock lets writes go on, and drops each index of drop
// with DROP INDEX CONCURRENTLY. Every statement can run again, so a step
// cut short is done again whole at the next Open: the version is written
// once every step is done.
type pgStep struct {
	tx      []string // "CREATE TABLE IF NOT EXISTS litequeue_copied"
	indexes []string // "CREATE INDEX IF NOT EXISTS litequeue_jobs_stopped"
	drop    []string // index names
}

var pgSteps = map[int]pgStep{
	// Version 3's index is built before the one it replaces is dropped.
	2: {indexes: []string{"CREATE INDEX IF NOT EXISTS litequeue_jobs_stopped"}, drop: []string{"litequeue_jobs_list"}},
	// The trigger calls the function by its identity, which CREATE OR
	// REPLACE keeps: the trigger itself, and its table, are not touched.
	// Processes of an older binary still at work listen on the channel
	// litequeue, which nothing notifies any more: they find new jobs at
	// their poll, each second, until they are upgraded too.
	3: {tx: []string{"CREATE OR REPLACE FUNCTION litequeue_notify()", "CREATE TABLE IF NOT EXISTS litequeue_copied"}},
	// A new table, which only this version's processes use: older ones
	// at work on the tables meanwhile never read it.
	4: {tx: []string{"CREATE TABLE IF NOT EXISTS litequeue_kinds"}},
	// New tables, which only this version's processes use. The wake-up
	// triggers fire once per statement (schema.sql). Both
	// are replaced, and the function with them, in the step's one
	// transaction: every other session's statement fires either the old
	// trigger or the new ones, never none, and both notify the same
	// channel with the same empty payload, which is all that listeners
	// of an older binary still at work read. CREATE OR REPLACE TRIGGER
	// takes litequeue_jobs' SHARE ROW EXCLUSIVE lock: the step waits for
	// the write transactions open on the table to end, and writes wait
	// for the step's commit, which follows at once.
	5: {tx: []string{"CREATE TABLE IF NOT EXISTS litequeue_policies", "CREATE TABLE IF NOT EXISTS litequeue_throughput",
		"CREATE TABLE IF NOT EXISTS litequeue_workers",
		"CREATE OR REPLACE FUNCTION litequeue_notify()", "CREATE OR REPLACE TRIGGER litequeue_jobs_notify",
		"CREATE OR REPLACE TRIGGER litequeue_jobs_notify_update"}},
	// New tables, which only this version's processes use; the counts;
	// and the index of pending jobs by kind.
	//
	// The counts: the table, its triggers and the count of the jobs
	// already there, in this one transaction under the jobs' SHARE ROW
	// EXCLUSIVE lock, taken first (see schema.sql): no write falls between
	// the count and the triggers. Run again, the count starts over.
	//
	// The index of pending jobs by kind is built beside the two it
	// replaces, which serve the claims of processes still at work
	// meanwhile, and they are dropped once it is valid; the index of the
	// history by finished_at goes. A process of an older binary at work on
	// tables of version 7 claims and reads NextDue through the new index,
	// sorting its matches.
	6: {tx: []string{"CREATE TABLE IF NOT EXISTS litequeue_outputs", "CREATE TABLE IF NOT EXISTS litequeue_checkpoints",
		"CREATE TABLE IF NOT EXISTS litequeue_progress", "CREATE TABLE IF NOT EXISTS litequeue_commits",
		"CREATE TABLE IF NOT EXISTS litequeue_counts", "CREATE OR REPLACE FUNCTION litequeue_count()",
		"LOCK TABLE litequeue_jobs", "CREATE OR REPLACE TRIGGER litequeue_jobs_count_insert",
		"CREATE OR REPLACE TRIGGER litequeue_jobs_count_delete", "CREATE OR REPLACE TRIGGER litequeue_jobs_count_update",
		"DELETE FROM litequeue_counts", "INSERT INTO litequeue_counts"},
		indexes: []string{"CREATE INDEX IF NOT EXISTS litequeue_jobs_pending"},
		drop:    []string{"litequeue_jobs_claim", "litequeue_jobs_next", "litequeue_attempts_recent"}},
	// Dependencies: a column, which PostgreSQL adds with its default
	// without rewriting the table (a short ACCESS EXCLUSIVE lock), new
	// tables, and the index of waiting jobs, built beside the writes. A
	// process of an older binary refuses tables of version 8: it would
	// end jobs without telling their dependents.
	7: {tx: []string{"ALTER TABLE litequeue_jobs ADD COLUMN IF NOT EXISTS dependents",
		"CREATE TABLE IF NOT EXISTS litequeue_deps", "CREATE INDEX IF NOT EXISTS litequeue_deps_on",
		"CREATE TABLE IF NOT EXISTS litequeue_waits"},
		indexes: []string{"CREATE INDEX IF NOT EXISTS litequeue_jobs_waiting"}},
}

// pgChannel names the channel of the wake-ups of litequeue's tables in
// schema as their trigger does (litequeue_notify in schema.sql):
// litequeue_<schema>, or, where that would pass PostgreSQL's 63 bytes for
// a name, litequeue_<the md5 of schema, in hex>. The Queues of other
// schemas in the database listen on channels of their own.
func pgChannel(schema string) string {
	if ch := "litequeue_" + schema; len(ch) <= 63 {
		return ch
	}
	sum := md5.Sum([]byte(schema))
	return "litequeue_" + hex.EncodeToString(sum[:])
}

// pgTablesSchemaSQL reads the schema of litequeue's tables: the one the
// connections' search_path finds them in, the trigger's TG_TABLE_SCHEMA.
const pgTablesSchemaSQL = `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.oid = 'litequeue_jobs'::regclass`

// migratePostgres creates litequeue's tables (unless existing: then their
// absence is an error) or upgrades them, and returns the channel of their
// wake-ups (pgChannel). Tables of this binary's version are only read:
// CREATE INDEX IF NOT EXISTS and CREATE OR REPLACE TRIGGER lock the table
// even when there is nothing to create, which would stall, or deadlock
// with, the writers of the processes at work (unlike the file's, a change
// to schema.sql takes a new version). Otherwise it works under
// the migration's lock (pgLockMigration), so that of several processes
// that open at once one creates or upgrades the tables and the others
// find them done.
func migratePostgres(ctx context.Context, db *sqlx.DB, existing bool) (channel string, err error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	version, err := pgCheckVersion(ctx, conn, existing)
	if err == nil && version < pgSchemaVersion {
		err = pgMigrate(ctx, conn, existing)
	}
	if err != nil {
		return "", err
	}
	var schema string
	if err := conn.GetContext(ctx, &schema, pgTablesSchemaSQL); err != nil {
		return "", fmt.Errorf("read the schema of litequeue's tables: %w", err)
	}
	return pgChannel(schema), nil
}

// pgCheckVersion returns the version of litequeue's tables, 0 for none,
// and refuses tables newer than this binary's, and none if existing.
func pgCheckVersion(ctx context.Context, conn *sqlx.Conn, existing bool) (int, error) {
	var present bool
	if err := conn.GetContext(ctx, &present, `SELECT to_regclass('litequeue_meta') IS NOT NULL`); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	if !present && existing {
		return 0, errors.New("no litequeue tables in the schema of the connections' search_path")
	}
	if !present {
		return 0, nil
	}
	var version int
	if err := conn.GetContext(ctx, &version, VersionSQL); err != nil && !errors.Is(err, store.ErrNoRows) {
		return 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	if version > pgSchemaVersion {
		return 0, fmt.Errorf("litequeue schema version %d is newer than this binary's %d: upgrade litequeue", version, pgSchemaVersion)
	}
	return version, nil
}

// pgMigrate creates or upgrades litequeue's tables under the migration's
// lock, unless another process did so while it waited for the lock. New
// tables, or those of version 1, which has no step, are made by the whole
// schema in one transaction.
func pgMigrate(ctx context.Context, conn *sqlx.Conn, existing bool) (err error) {
	unlock, err := pgLockMigration(ctx, conn)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, unlock()) }()
	version, err := pgCheckVersion(ctx, conn, existing)
	if err != nil || version == pgSchemaVersion {
		return err
	}
	if _, ok := pgSteps[version]; !ok {
		return pgInTx(ctx, conn, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, pgSchemaSQL); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
			return pgRecordVersion(ctx, tx)
		})
	}
	for v := version; v < pgSchemaVersion; v++ {
		if err := pgSteps[v].run(ctx, conn); err != nil {
			return fmt.Errorf("migrate: upgrade version %d: %w", v, err)
		}
	}
	return pgInTx(ctx, conn, func(tx *sqlx.Tx) error { return pgRecordVersion(ctx, tx) })
}

// pgMigrationLock is the key of the migration's lock: one per schema.
const pgMigrationLock = `hashtext(current_schema() || '.litequeue')`

// pgLockMigration takes the migration's lock on conn, waiting while
// another session holds it, and returns the func that releases it. The
// lock is the session's, held across the transactions and index builds of
// an upgrade. It waits by asking again, not in pg_advisory_lock: a
// session that waits inside a statement holds a snapshot, and the
// holder's CREATE INDEX CONCURRENTLY waits for every older snapshot to go
// (a deadlock, which the server ends by failing one of them). Where the
// lock cannot be released, the connection is closed, which releases it.
func pgLockMigration(ctx context.Context, conn *sqlx.Conn) (unlock func() error, err error) {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var ok bool
		if err := conn.GetContext(ctx, &ok, `SELECT pg_try_advisory_lock(`+pgMigrationLock+`)`); err != nil {
			return nil, fmt.Errorf("migrate: lock: %w", err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("migrate: wait for another process's migration: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
	return func() error {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+pgMigrationLock+`)`); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
			return fmt.Errorf("migrate: unlock: %w", err)
		}
		return nil
	}, nil
}

// run runs the step on conn.
func (s pgStep) run(ctx context.Context, conn *sqlx.Conn) error {
	if len(s.tx) > 0 {
		err := pgInTx(ctx, conn, func(tx *sqlx.Tx) error {
			for _, head := range s.tx {
				if _, err := tx.ExecContext(ctx, pgStatement(head)); err != nil {
					return fmt.Errorf("%s: %w", head, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, head := range s.indexes {
		if err := pgBuildIndex(ctx, conn, head); err != nil {
			return err
		}
	}
	for _, name := range s.drop {
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return fmt.Errorf("drop index %s: %w", name, err)
		}
	}
	return nil
}

// pgBuildIndex builds the schema's index that its statement head
// creates, with CREATE INDEX CONCURRENTLY: it scans the table twice and
// waits for the transactions that began before it, while writes go on. A
// concurrent build cut short (a crash, a cancel) leaves an INVALID index
// of the name, which the server updates at every write and never reads,
// and which IF NOT EXISTS would keep: such an index is dropped first.
func pgBuildIndex(ctx context.Context, conn *sqlx.Conn, head string) error {
	name := head[strings.LastIndexByte(head, ' ')+1:]
	var valid bool
	err := conn.GetContext(ctx, &valid, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, name)
	switch {
	case errors.Is(err, store.ErrNoRows): // not there yet
	case err != nil:
		return fmt.Errorf("index %s: %w", name, err)
	case !valid:
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return fmt.Errorf("drop the invalid index %s: %w", name, err)
		}
	}
	stmt := strings.Replace(pgStatement(head), "INDEX IF NOT EXISTS", "INDEX CONCURRENTLY IF NOT EXISTS", 1)
	if _, err := conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	return nil
}

// pgStatement returns the statement of schema.sql that begins
// with head, up to its semicolon (the one after a function's body). It
// panics if there is none: a mistake in pgSteps, which every test that
// upgrades a database finds.
func pgStatement(head string) string {
	for i := 0; ; {
		j := strings.Index(pgSchemaSQL[i:], "\n"+head)
		if j < 0 {
			panic("litequeue: schema.sql has no statement " + head)
		}
		s := pgSchemaSQL[i+j+1:]
		i += j + 1
		if next := s[len(head)]; next != ' ' && next != '\n' && next != '(' && next != ';' {
			continue // head is a prefix of another name
		}
		for end := 0; ; {
			k := strings.Index(s[end:], ";\n")
			if k < 0 {
				panic("litequeue: schema.sql: no end to the statement " + head)
			}
			end += k + 1
			if strings.Count(s[:end], "$$")%2 == 0 {
				return s[:end]
			}
		}
	}
}

// pgInTx runs fn in a transaction on conn.
func pgInTx(ctx context.Context, conn *sqlx.Conn, fn func(*sqlx.Tx) error) error {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// pgRecordVersion records that the tables are of pgSchemaVersion, and
// gives the database its ID (addDatabaseID) if it has none.
func pgRecordVersion(ctx context.Context, tx *sqlx.Tx) error {
	if err := store.AddDatabaseID(ctx, store.WrapTx(tx, new(store.Dialect))); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO litequeue_meta (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, "schema_version", fmt.Sprint(pgSchemaVersion)); err != nil {
		return fmt.Errorf("migrate: write schema version: %w", err)
	}
	return nil
}
