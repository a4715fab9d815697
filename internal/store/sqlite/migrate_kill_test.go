package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// childPath names, in the environment of the test binary run again as a
// child, the file TestMigrate_Child opens.
const childPath = "LITEQUEUE_TEST_MIGRATE_CHILD"

// TestMigrate_Child is the child of TestMigrate_KilledMidway: it opens
// the file its environment names, migrating it, prints "opened" and waits
// to be killed. Without the environment it does nothing.
func TestMigrate_Child(t *testing.T) {
	path := os.Getenv(childPath)
	if path == "" {
		t.Skip("the child of TestMigrate_KilledMidway")
	}
	e, err := Open(path, Config{Schema: testSchema(t), Synchronous: "full", ReadPool: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	fmt.Println("opened")
	time.Sleep(time.Minute)
}

// version5File makes a file of version 5 with jobs jobs, a third each
// pending, completed and dead, and a history row each: a file of this
// version's, with the indexes that version 6 changed or dropped as
// version 5 had them.
func version5File(t *testing.T, path string, jobs int) {
	t.Helper()
	e, err := Open(path, Config{Schema: testSchema(t), Synchronous: "normal", ReadPool: 1})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	db := sqlx.MustOpen("sqlite", path)
	defer db.Close()
	db.MustExec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
		INSERT INTO litequeue_jobs (queue, kind, payload, state, priority, max_tries, run_at, created_at, finished_at)
		SELECT 'q', 'k' || (i % 5), x'00', CASE i % 3 WHEN 0 THEN 'pending' WHEN 1 THEN 'completed' ELSE 'dead' END, i % 3, 3, i, i, CASE WHEN i % 3 > 0 THEN i END FROM s`, jobs)
	db.MustExec(`INSERT INTO litequeue_attempts (job_id, attempt, started_at, finished_at, outcome, kind, next_state)
		SELECT id, 1, created_at, created_at, 'completed', kind, state FROM litequeue_jobs`)
	db.MustExec(`DROP INDEX litequeue_jobs_claim;
		CREATE INDEX litequeue_jobs_claim ON litequeue_jobs (priority DESC, run_at, id) WHERE state = 'pending';
		CREATE INDEX litequeue_jobs_next ON litequeue_jobs (kind, run_at) WHERE state = 'pending';
		CREATE INDEX litequeue_attempts_recent ON litequeue_attempts (finished_at);
		DROP TABLE litequeue_deps;
		DROP TABLE litequeue_waits;
		DROP INDEX litequeue_jobs_waiting;
		ALTER TABLE litequeue_jobs DROP COLUMN dependents;
		UPDATE litequeue_meta SET value = '5' WHERE name = 'schema_version'`)
}

// indexesOf lists the names and SQL of the file's indexes of litequeue.
func indexesOf(t *testing.T, db *sqlx.DB) []string {
	t.Helper()
	var out []string
	if err := db.Select(&out, `SELECT name || ': ' || coalesce(sql, '') FROM sqlite_schema
		WHERE type = 'index' AND name LIKE 'litequeue%' ORDER BY name`); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMigrate_KilledMidway SIGKILLs a child process in the middle of its
// upgrade of a file of version 5 to 6 (while it holds the file's write
// lock, before it opened), several times, and opens the file afterwards:
// it has every job and history row, the indexes of a new file (the claim
// index by kind, no litequeue_jobs_next nor litequeue_attempts_recent),
// version 6, and passes SQLite's integrity check.
func TestMigrate_KilledMidway(t *testing.T) {
	t.Parallel()
	if os.Getenv(childPath) != "" {
		t.Skip("in the child")
	}
	const jobs = 60_000
	dir := t.TempDir()
	want := indexesOf(t, openTemp(t, Config{}).Info().Reads)
	old := filepath.Join(dir, "v5.db")
	version5File(t, old, jobs)
	midway := 0
	for round := range 4 {
		path := filepath.Join(dir, fmt.Sprintf("round%d.db", round))
		copyFile(t, old, path)
		if killMidway(t, path) {
			midway++
		}
		e, err := Open(path, Config{Schema: testSchema(t), Synchronous: "full", ReadPool: 1})
		if err != nil {
			t.Fatalf("round %d: open after the kill: %v", round, err)
		}
		db := e.Info().Reads
		var version, n, history int
		var integrity string
		db.Get(&version, `SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`)
		db.Get(&n, `SELECT COUNT(*) FROM litequeue_jobs`)
		db.Get(&history, `SELECT COUNT(*) FROM litequeue_attempts`)
		db.Get(&integrity, `PRAGMA integrity_check`)
		if version != schemaVersion || n != jobs || history != jobs || integrity != "ok" {
			t.Errorf("round %d: version %d, %d jobs, %d history rows, integrity %q; want %d, %d, %d, ok",
				round, version, n, history, integrity, schemaVersion, jobs, jobs)
		}
		if got := indexesOf(t, db); !slices.Equal(got, want) {
			t.Errorf("round %d: indexes\n%s\nwant those of a new file\n%s", round, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		e.Close()
	}
	if midway == 0 {
		t.Error("no child was killed in the middle of its migration")
	}
	t.Logf("%d of 4 children killed in the middle of their migration", midway)
}

// killMidway runs the child on path and SIGKILLs it once it holds the
// file's write lock (another connection cannot begin a write) and has not
// opened yet, or, failing that, once it opened; it reports whether the
// kill came in the middle of the migration: the file is still of version
// 5 after it.
func killMidway(t *testing.T, path string) bool {
	t.Helper()
	child := storetest.StartChild(t, "TestMigrate_Child", childPath, path)
	probe := sqlx.MustOpen("sqlite", path+"?_pragma=busy_timeout(0)")
	defer probe.Close()
	probe.SetMaxOpenConns(1)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if child.Opened() {
			child.Kill()
			return false
		}
		if busy(probe) {
			child.Kill()
			var version int // still 5: the kill came before the migration committed
			if err := probe.Get(&version, `SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`); err != nil {
				t.Fatal(err)
			}
			return version == 5
		}
	}
	t.Fatal("the child neither opened nor took the write lock")
	return false
}

// busy reports whether another connection holds the file's write lock.
func busy(probe *sqlx.DB) bool {
	_, err := probe.Exec(`BEGIN IMMEDIATE; ROLLBACK`)
	return err != nil && strings.Contains(err.Error(), "locked")
}

// copyFile copies the file at from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
