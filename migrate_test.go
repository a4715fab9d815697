package litequeue_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// dumpTable returns every row of a table as SQL literals (quote()), in id
// order: equal dumps are equal bytes and equal storage classes.
func dumpTable(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, "quote("+c+")")
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	rows, err = db.Query(`SELECT ` + strings.Join(cols, " || ',' || ") + ` FROM ` + table + ` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var dump []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		dump = append(dump, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return dump
}

// dumpFile dumps the jobs and the history of the file at path.
func dumpFile(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return map[string][]string{
		"litequeue_jobs":     dumpTable(t, db, "litequeue_jobs"),
		"litequeue_attempts": dumpTable(t, db, "litequeue_attempts"),
	}
}

// fileSchemaVersion is the version of the file's schema this binary
// writes.
const fileSchemaVersion = "7"

// withNullMetadata is a dump of a file older than version 4 as it reads
// once migrated: each job's row ends in the metadata column of version 4
// and the expires_at column of version 5, both NULL, and the dependents
// column of version 7, 0.
func withNullMetadata(dump map[string][]string) map[string][]string {
	jobs := make([]string, len(dump["litequeue_jobs"]))
	for i, row := range dump["litequeue_jobs"] {
		jobs[i] = row + ",NULL,NULL,0" // metadata, expires_at, dependents
	}
	return map[string][]string{"litequeue_jobs": jobs, "litequeue_attempts": dump["litequeue_attempts"]}
}

// withDependents is a dump of a file of version 5 or 6 as it reads once
// migrated: each job's row ends in the dependents column of version 7, 0.
func withDependents(dump map[string][]string) map[string][]string {
	jobs := make([]string, len(dump["litequeue_jobs"]))
	for i, row := range dump["litequeue_jobs"] {
		jobs[i] = row + ",0"
	}
	return map[string][]string{"litequeue_jobs": jobs, "litequeue_attempts": dump["litequeue_attempts"]}
}

// schemaOf lists the file's schema objects (type, name, SQL) as a new file
// of the current version has them.
func schemaOf(t *testing.T, q *litequeue.Queue) []string {
	t.Helper()
	var objects []string
	err := q.DB().Select(&objects, `SELECT type || ' ' || name || ': ' || coalesce(sql, '')
		FROM sqlite_schema WHERE name LIKE 'litequeue%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	return objects
}

// TestOpen_MigratesToVersion3 opens files of schema versions 1 and 2: Open
// rebuilds litequeue_jobs with an AUTOINCREMENT id, keeps every job and
// history row byte for byte (with the metadata column of version 4, NULL),
// gives the file the schema a new file has, moves it to the current
// version, and
// hands out IDs above every ID the old file shows it handed out (the
// highest job's, 7, and the history's, 12).
func TestOpen_MigratesToVersion3(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	t.Parallel()
	fresh, _ := openQueue(t, litequeue.Options{})
	want := schemaOf(t, fresh)
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("version %d", version), func(t *testing.T) {
			t.Parallel()
			path := oldFile(t, version)
			before := dumpFile(t, path)
			q := openAt(t, path, litequeue.Options{})
			if diff := cmp.Diff(withNullMetadata(before), dumpFile(t, path)); diff != "" {
				t.Errorf("rows changed by the migration (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(want, schemaOf(t, q)); diff != "" {
				t.Errorf("schema after the migration (-new file +migrated):\n%s", diff)
			}
			var v string
			if err := q.DB().Get(&v, `SELECT value FROM litequeue_meta WHERE name = 'schema_version'`); err != nil || v != fileSchemaVersion {
				t.Errorf("schema version %q (%v), want %s", v, err, fileSchemaVersion)
			}
			if got := get(t, q, 2); got.State != litequeue.Dead || got.UniqueKey != "welcome-ada" || len(history(t, q, 2)) != 2 {
				t.Errorf("job 2 after the migration: %+v, %d history rows", got, len(history(t, q, 2)))
			}
			if got := enqueue(t, q, "k", nil).ID; got != 13 {
				t.Errorf("first new ID %d, want 13: above job 12 of the history", got)
			}
			// The newest job gone, its ID is not handed out again.
			if err := errors.Join(q.Cancel(t.Context(), 13), q.Delete(t.Context(), 13)); err != nil {
				t.Fatal(err)
			}
			if got := enqueue(t, q, "k", nil).ID; got != 14 {
				t.Errorf("new ID after job 13 was deleted: %d, want 14", got)
			}
			// The migrated unique index still holds job 4's key.
			if dup := enqueue(t, q, "later", nil, litequeue.UniqueKey("digest")); !dup.Duplicate || dup.ID != 4 {
				t.Errorf("enqueue with job 4's key: %+v, want job 4 as a duplicate", dup)
			}
			if err := q.Close(); err != nil {
				t.Fatal(err)
			}
			// Opening again changes nothing and goes on from 14.
			again := dumpFile(t, path)
			q = openAt(t, path, litequeue.Options{})
			if diff := cmp.Diff(again, dumpFile(t, path)); diff != "" {
				t.Errorf("rows changed by opening a version 4 file (-before +after):\n%s", diff)
			}
			if got := enqueue(t, q, "k", nil).ID; got != 15 {
				t.Errorf("new ID after reopening %d, want 15", got)
			}
		})
	}
}

// TestOpen_MigratesEmptyVersion2 migrates a version 2 file with no jobs:
// the first ID is 1, as in a new file.
func TestOpen_MigratesEmptyVersion2(t *testing.T) {
	t.Parallel()
	ddl, err := os.ReadFile(filepath.Join("testdata", "schema-v2.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	sqliteFile(t, path, `PRAGMA journal_mode = WAL`, string(ddl),
		`INSERT INTO litequeue_meta (name, value) VALUES ('schema_version', '2')`)
	q := openAt(t, path, litequeue.Options{})
	if got := enqueue(t, q, "k", nil).ID; got != 1 {
		t.Errorf("first ID %d, want 1", got)
	}
}

// TestOpen_MigratesConcurrently opens one version 2 file from several
// Queues at once, as several processes starting together would: one
// migrates, in its write transaction; the others find version 4 when they
// get the lock. Every Open succeeds and every row is kept once.
func TestOpen_MigratesConcurrently(t *testing.T) {
	t.Parallel()
	path := oldFile(t, 2)
	before := dumpFile(t, path)
	const n = 4
	queues := make([]*litequeue.Queue, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { queues[i], errs[i] = litequeue.Open(path, litequeue.Options{Clock: newMock()}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		t.Cleanup(func() { queues[i].Close() })
	}
	if diff := cmp.Diff(withNullMetadata(before), dumpFile(t, path)); diff != "" {
		t.Errorf("rows changed by the migration (-before +after):\n%s", diff)
	}
	ids := map[int64]bool{}
	for _, q := range queues {
		ids[enqueue(t, q, "k", nil).ID] = true
	}
	for id := range int64(13) {
		if ids[id] {
			t.Errorf("new job got ID %d, handed out before the migration", id)
		}
	}
	if len(ids) != n {
		t.Errorf("%d distinct IDs for %d jobs", len(ids), n)
	}
}

// TestOpen_AddsNewIndexes opens a file of the current version made before
// schema.sql changed its index for pages of finished jobs (from
// litequeue_jobs_list, of every finished job, to litequeue_jobs_stopped,
// of those that did not complete) and its index of failed runs (from
// litequeue_attempts_failed, of "outcome IN (…)", to
// litequeue_attempts_breaker, of ORs): Open drops the old and creates the
// new, so the file reads its lists, and writes its finished jobs and their
// history, as a new file does, without a new schema version.
func TestOpen_AddsNewIndexes(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	t.Parallel()
	fresh, _ := openQueue(t, litequeue.Options{})
	want := schemaOf(t, fresh)
	path := filepath.Join(t.TempDir(), "before-the-index.db")
	q := openAt(t, path, litequeue.Options{})
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	sqliteFile(t, path, `DROP INDEX litequeue_jobs_stopped`,
		`CREATE INDEX litequeue_jobs_list ON litequeue_jobs (state, id) WHERE finished_at IS NOT NULL`,
		`DROP INDEX litequeue_attempts_breaker`,
		`CREATE INDEX litequeue_attempts_failed ON litequeue_attempts (kind, finished_at)
			WHERE outcome IN ('failed', 'panicked', 'timed_out', 'lease_expired')`)
	q = openAt(t, path, litequeue.Options{})
	if diff := cmp.Diff(want, schemaOf(t, q)); diff != "" {
		t.Errorf("schema after Open (-new file +reopened):\n%s", diff)
	}
}

// TestOpen_MigratesVersion3 opens a file of schema version 3: Open adds
// the metadata column, keeps every job and history row byte for byte
// (their metadata NULL: none), gives litequeue_jobs the columns and the
// file the indexes a new file has, and the jobs read as before, now with
// room for metadata.
func TestOpen_MigratesVersion3(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	t.Parallel()
	fresh, _ := openQueue(t, litequeue.Options{})
	path := oldFile(t, 3)
	before := dumpFile(t, path)
	q := openAt(t, path, litequeue.Options{})
	if diff := cmp.Diff(withNullMetadata(before), dumpFile(t, path)); diff != "" {
		t.Errorf("rows changed by the migration (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(columnsOf(t, fresh, "litequeue_jobs"), columnsOf(t, q, "litequeue_jobs")); diff != "" {
		t.Errorf("columns after the migration (-new file +migrated):\n%s", diff)
	}
	if diff := cmp.Diff(indexesOf(t, fresh), indexesOf(t, q)); diff != "" {
		t.Errorf("indexes after the migration (-new file +migrated):\n%s", diff)
	}
	var v string
	if err := q.DB().Get(&v, `SELECT value FROM litequeue_meta WHERE name = 'schema_version'`); err != nil || v != fileSchemaVersion {
		t.Errorf("schema version %q (%v), want %s", v, err, fileSchemaVersion)
	}
	if got := get(t, q, 2); got.State != litequeue.Dead || got.UniqueKey != "welcome-ada" || got.Metadata != nil {
		t.Errorf("job 2 after the migration: %+v", got)
	}
	j := enqueue(t, q, "k", nil, litequeue.Metadata("request", "r-1"))
	if got, want := get(t, q, j.ID).Metadata, map[string]string{"request": "r-1"}; !cmp.Equal(got, want) {
		t.Errorf("metadata of a job enqueued after the migration: %v, want %v", got, want)
	}
}

// TestOpenReadOnly_Version3 inspects a file of schema version 3, which
// OpenReadOnly does not migrate: its jobs read with no metadata, and the
// file is left as it was.
func TestOpenReadOnly_Version3(t *testing.T) {
	t.Parallel()
	path := oldFile(t, 3)
	before := dumpFile(t, path)
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := get(t, ro, 2); got.State != litequeue.Dead || got.Metadata != nil {
		t.Errorf("job 2: %+v", got)
	}
	jobs, err := ro.List(t.Context(), litequeue.Filter{})
	if err != nil || len(jobs) != 5 {
		t.Fatalf("List: %d jobs, %v; want 5", len(jobs), err)
	}
	if diff := cmp.Diff(before, dumpFile(t, path)); diff != "" {
		t.Errorf("OpenReadOnly changed the file (-before +after):\n%s", diff)
	}
}

// columnsOf lists a table's columns: name, type, NOT NULL, default.
func columnsOf(t *testing.T, q *litequeue.Queue, table string) []string {
	t.Helper()
	var cols []string
	err := q.DB().Select(&cols, `SELECT name || ' ' || type || ' ' || "notnull" || ' ' || coalesce(dflt_value, 'NULL')
		FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// indexesOf lists the file's indexes of litequeue's tables, with their SQL.
func indexesOf(t *testing.T, q *litequeue.Queue) []string {
	t.Helper()
	var indexes []string
	err := q.DB().Select(&indexes, `SELECT name || ': ' || coalesce(sql, '')
		FROM sqlite_schema WHERE type = 'index' AND name LIKE 'litequeue%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	return indexes
}

// TestOpen_MigratesVersion1 opens a file of schema version 1 (its state
// index over every row): Open moves it to version 4 (the finished index,
// partial; see also TestOpen_MigratesToVersion3) and keeps every job and
// its history.
func TestOpen_MigratesVersion1(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("k", doomed)
	dead := enqueue(t, q, "k", nil)
	runDue(t, q)
	waiting := enqueue(t, q, "later", nil, litequeue.Delay(time.Hour))
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	// Version 1 as it was written.
	sqliteFile(t, path,
		`DROP INDEX litequeue_jobs_finished`,
		`CREATE INDEX litequeue_jobs_state ON litequeue_jobs (state, finished_at)`,
		`UPDATE litequeue_meta SET value = '1' WHERE name = 'schema_version'`)

	q = openAt(t, path, litequeue.Options{Clock: clk})
	var version string
	if err := q.DB().Get(&version, `SELECT value FROM litequeue_meta WHERE name = 'schema_version'`); err != nil || version != fileSchemaVersion {
		t.Fatalf("schema version %q (%v), want %s", version, err, fileSchemaVersion)
	}
	var indexes []string
	if err := q.DB().Select(&indexes, `SELECT name FROM sqlite_schema WHERE type = 'index' AND name IN ('litequeue_jobs_state', 'litequeue_jobs_finished')`); err != nil {
		t.Fatal(err)
	}
	if len(indexes) != 1 || indexes[0] != "litequeue_jobs_finished" {
		t.Fatalf("indexes after the migration: %v, want only litequeue_jobs_finished", indexes)
	}
	if got := get(t, q, dead.ID); got.State != litequeue.Dead || len(history(t, q, dead.ID)) != 1 {
		t.Fatalf("the dead job after the migration: %s with %d history rows", got.State, len(history(t, q, dead.ID)))
	}
	if got := get(t, q, waiting.ID); got.State != litequeue.Pending {
		t.Fatalf("the waiting job after the migration: %s", got.State)
	}
	if deadJobs, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Dead}); err != nil || len(deadJobs) != 1 {
		t.Fatalf("List dead after the migration: %d jobs, %v", len(deadJobs), err)
	}
}

// oldFileRows are jobs and history rows as litequeue versions 1 and 2 wrote
// them: every state, NULLs, a BLOB payload that is not JSON, an empty one, a
// unique key, a running job's lease. Job 12 was deleted from the jobs table
// (by the app, through DB()) but its history rows remain: its ID was handed
// out too.
var oldFileRows = []string{
	`INSERT INTO litequeue_jobs (id, queue, kind, payload, state, priority, attempt, max_tries, own_max_tries,
		run_at, created_at, finished_at, last_error, unique_key, token, lease_until, started_at, worker, retry_delay, cancel) VALUES
		(1, 'default', 'ok', X'226122', 'completed', 0, 1, 8, 0, NULL, 1000, 2000, '', NULL, 1, 0, 1500, 'w:1', 2000, 0),
		(2, 'mail', 'send', X'6e6f74206a736f6e', 'dead', 3, 2, 2, 2, 3000, 1000, 4000, 'smtp: 550', 'welcome-ada', 2, 0, 3500, 'w:1', 0, 0),
		(4, 'default', 'later', X'', 'pending', -1, 0, 8, 0, 999999999, 1000, NULL, '', 'digest', 0, 0, 0, '', 0, 0),
		(5, 'default', 'slow', X'7b7d', 'running', 0, 1, 8, 0, 5000, 1000, NULL, 'boom', NULL, 7, 65000, 5000, 'w:2', 4000, 1),
		(7, 'default', 'spam', X'6e756c6c', 'discarded', 0, 1, 8, 0, 6000, 1000, 6000, '', NULL, 1, 0, 6000, 'w:1', 2000, 0)`,
	`INSERT INTO litequeue_attempts (id, job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state) VALUES
		(1, 1, 1, 1500, 2000, 'completed', '', '', 0, 'w:1', 'ok', 'completed'),
		(2, 2, 1, 1500, 2500, 'failed', 'smtp: 451', '*main.smtpError', 500, 'w:1', 'send', 'pending'),
		(3, 2, 2, 3500, 4000, 'failed', 'smtp: 550', '*errors.errorString', 0, 'w:1', 'send', 'dead'),
		(4, 12, 1, 7000, 8000, 'completed', '', '', 0, 'w:3', 'gone', 'completed'),
		(5, 7, 1, 6000, 6000, 'discarded', 'spam', '*errors.errorString', 0, 'w:1', 'spam', 'discarded')`,
}

// oldFile writes a litequeue file of the given schema version, as that
// version's binary left it, holding oldFileRows.
func oldFile(t *testing.T, version int) string {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("schema-v%d.sql", version)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	sqliteFile(t, path, append([]string{
		`PRAGMA auto_vacuum = INCREMENTAL`,
		`PRAGMA journal_mode = WAL`,
		string(ddl),
		fmt.Sprintf(`INSERT INTO litequeue_meta (name, value) VALUES ('schema_version', '%d')`, version),
		`PRAGMA application_id = 1280398661`, // "LQUE"
	}, oldFileRows...)...)
	return path
}
