package sqlite

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// migrate switches the file to WAL and creates or upgrades litequeue's
// tables. It does so in one write transaction that reads the version again
// once it holds the lock, so that when several processes open an old file
// at once one of them migrates it and the others find it done. Opening
// never destroys data: schema.sql adds tables and indexes, version 6
// drops the indexes it replaced or no longer needs (see upgradeIndexes; it runs at every Open, so an index or a table
// added to it needs no new version: see litequeue_jobs_stopped,
// litequeue_attempts_breaker and litequeue_copied), the one rebuild, that
// of version 3 (see setAsideJobsSQL), copies every row, versions 4
// and 5 add a column each (see addMetadataSQL, addExpiresSQL), and version
// 6 counts the jobs once (litequeue_counts, store.RewriteCounts). A file
// without a database ID gets one (addDatabaseID).
//
// A new (empty) file is first set to auto_vacuum=INCREMENTAL, which SQLite
// accepts only before the file's first page is written, so that the
// janitor can give the space of purged jobs back to the file system (see
// vacuum). A file that already has pages keeps its auto_vacuum: changing
// it needs a VACUUM, which rewrites the whole file.
func migrate(ctx context.Context, db *sqlx.DB, schemaSQL string) error {
	if err := setJournal(ctx, db); err != nil {
		return err
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	version, err := readSchemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if version > schemaVersion { // another process upgraded it meanwhile
		return fmt.Errorf("schema version %d is newer than this binary's %d", version, schemaVersion)
	}
	if version == schemaVersion {
		// schema.sql runs again, to make what it has changed without a
		// new version: an index (litequeue_jobs_stopped, which replaced
		// litequeue_jobs_list; litequeue_attempts_breaker, which replaced
		// litequeue_attempts_failed), a table (litequeue_copied). When
		// nothing is missing it writes nothing.
		if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
			return fmt.Errorf("create schema: %w", err)
		}
	} else {
		if err := upgrade(ctx, tx, version, schemaSQL); err != nil {
			return err
		}
		if err := claimFile(ctx, tx); err != nil {
			return err
		}
	}
	if err := store.AddDatabaseID(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// setJournal sets a new file to auto_vacuum=INCREMENTAL and every file to
// WAL.
func setJournal(ctx context.Context, db *sqlx.DB) error {
	var pages int
	if err := db.GetContext(ctx, &pages, `PRAGMA page_count`); err != nil {
		return fmt.Errorf("read page_count: %w", err)
	}
	if pages == 0 {
		if _, err := db.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
			return fmt.Errorf("set auto_vacuum: %w", err)
		}
	}
	var mode string
	if err := db.GetContext(ctx, &mode, `PRAGMA journal_mode = WAL`); err != nil {
		return fmt.Errorf("set journal_mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("set journal_mode: got %q, want wal", mode)
	}
	return nil
}

// upgrade creates litequeue's tables in tx, or upgrades them from version,
// and records the new version.
func upgrade(ctx context.Context, tx *sqlx.Tx, version int, schemaSQL string) error {
	rebuild := version == 1 || version == 2 // litequeue_jobs without AUTOINCREMENT
	if rebuild {
		if _, err := tx.ExecContext(ctx, setAsideJobsSQL); err != nil {
			return fmt.Errorf("set aside the jobs table of version %d: %w", version, err)
		}
	}
	if err := upgradeColumns(ctx, tx, version); err != nil {
		return err
	}
	if err := upgradeIndexes(ctx, tx, version); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, schemaSQL); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if rebuild {
		if _, err := tx.ExecContext(ctx, moveJobsSQL); err != nil {
			return fmt.Errorf("copy the jobs of version %d: %w", version, err)
		}
	}
	if version < 6 {
		// Version 6 counts the jobs (litequeue_counts): litequeue's
		// statements count what they write from now on (store.Deltas),
		// and the jobs already there are counted once, here.
		if err := store.RewriteCounts(ctx, tx); err != nil {
			return fmt.Errorf("count the jobs of version %d: %w", version, err)
		}
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO litequeue_meta (name, value) VALUES ('schema_version', ?)
		 ON CONFLICT (name) DO UPDATE SET value = excluded.value`, fmt.Sprint(schemaVersion))
	return err
}

// claimFile sets the file's application_id to litequeue's where it is 0.
func claimFile(ctx context.Context, tx *sqlx.Tx) error {
	var appID int64
	if err := tx.GetContext(ctx, &appID, `PRAGMA application_id`); err != nil {
		return err
	}
	if appID != 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, applicationID))
	return err
}

// Version 7 adds litequeue_jobs.dependents, 0 in every row of an older
// file: no job there has dependents. A file of version 1 or 2 gets it
// from schema.sql, in the rebuilt table.
const addDependentsSQL = `ALTER TABLE litequeue_jobs ADD COLUMN dependents INTEGER NOT NULL DEFAULT 0`

// Version 5 adds litequeue_jobs.expires_at, NULL in every row of an older
// file: those jobs were enqueued without ExpireAfter, and never expire. A
// file of version 1 or 2 gets it from schema.sql, in the rebuilt table.
const addExpiresSQL = `ALTER TABLE litequeue_jobs ADD COLUMN expires_at INTEGER`

// Version 4 adds litequeue_jobs.metadata, NULL in every row a file of
// version 3 holds: those jobs were enqueued without metadata. A file of
// version 1 or 2 gets it from schema.sql, in the rebuilt table.
const addMetadataSQL = `ALTER TABLE litequeue_jobs ADD COLUMN metadata TEXT`

// Version 3 declares litequeue_jobs.id AUTOINCREMENT, so that no ID is
// ever handed out twice (DESIGN.md, Identity). Before, SQLite gave a new
// job one more than the highest ID in the table, which is the ID of a job
// that retention had just purged, if that was the newest one. SQLite
// cannot add AUTOINCREMENT to a table, so a file of version 1 or 2 gets a
// new table in the migration's transaction: setAsideJobsSQL renames the
// old table and drops its indexes, schema.sql creates the new table and
// its indexes, and moveJobsSQL copies every row as it is and drops the old
// table. The history and the keys are not touched.
//
// The new table's sequence (sqlite_sequence, SQLite's own) starts above
// every ID the file shows was handed out: the highest job's, and the
// highest a history row names (a job deleted by the app with its history
// left behind). An ID above those, handed out and purged before the
// upgrade, has left no trace and may be handed out once more. PostgreSQL
// needs none of this: a BIGSERIAL never reuses a value.
const setAsideJobsSQL = `ALTER TABLE litequeue_jobs RENAME TO litequeue_jobs_old;
DROP INDEX IF EXISTS litequeue_jobs_claim;
DROP INDEX IF EXISTS litequeue_jobs_next;
DROP INDEX IF EXISTS litequeue_jobs_lease;
DROP INDEX IF EXISTS litequeue_jobs_unique;
DROP INDEX IF EXISTS litequeue_jobs_state;
DROP INDEX IF EXISTS litequeue_jobs_finished;`

// moveJobsSQL: see setAsideJobsSQL. The sequence also keeps what the old
// table's was, should it have had one.
const moveJobsSQL = `INSERT INTO litequeue_jobs
	(id, queue, kind, payload, state, priority, attempt, max_tries, own_max_tries, run_at, created_at,
	 finished_at, last_error, unique_key, token, lease_until, started_at, worker, retry_delay, cancel)
	SELECT id, queue, kind, payload, state, priority, attempt, max_tries, own_max_tries, run_at, created_at,
	 finished_at, last_error, unique_key, token, lease_until, started_at, worker, retry_delay, cancel
	FROM litequeue_jobs_old;
DELETE FROM sqlite_sequence WHERE name = 'litequeue_jobs';
INSERT INTO sqlite_sequence (name, seq) VALUES ('litequeue_jobs', max(
	(SELECT coalesce(max(id), 0) FROM litequeue_jobs_old),
	(SELECT coalesce(max(job_id), 0) FROM litequeue_attempts),
	(SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'litequeue_jobs_old')));
DROP TABLE litequeue_jobs_old;`

// Version 6 writes fewer index entries per job: litequeue_jobs_claim
// gains the kind as its first column, and litequeue_jobs_next, which
// served NextDue by kind, goes; litequeue_attempts_recent, of every
// history row by finished_at, goes too (see schema.sql). dropIndexesSQL
// drops the three before schema.sql builds the claim index anew, in the
// migration's one transaction: a migration cut short leaves the file as
// it was.
const dropIndexesSQL = `DROP INDEX IF EXISTS litequeue_jobs_claim;
DROP INDEX IF EXISTS litequeue_jobs_next;
DROP INDEX IF EXISTS litequeue_attempts_recent;`

// upgradeColumns adds to litequeue_jobs of version 3 to 6 the columns
// that later versions added (a table of version 1 or 2 is rebuilt whole).
func upgradeColumns(ctx context.Context, tx *sqlx.Tx, version int) error {
	if version == 3 {
		if _, err := tx.ExecContext(ctx, addMetadataSQL); err != nil {
			return fmt.Errorf("add the metadata column to version 3: %w", err)
		}
	}
	if version == 3 || version == 4 {
		if _, err := tx.ExecContext(ctx, addExpiresSQL); err != nil {
			return fmt.Errorf("add the expires_at column to version %d: %w", version, err)
		}
	}
	if version >= 3 && version < 7 {
		if _, err := tx.ExecContext(ctx, addDependentsSQL); err != nil {
			return fmt.Errorf("add the dependents column to version %d: %w", version, err)
		}
	}
	return nil
}

// upgradeIndexes drops, in a file of a version before 6, the indexes that
// version 6 changed or dropped.
func upgradeIndexes(ctx context.Context, tx *sqlx.Tx, version int) error {
	if version == 0 || version >= 6 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, dropIndexesSQL); err != nil {
		return fmt.Errorf("drop the indexes version 6 replaced: %w", err)
	}
	return nil
}
