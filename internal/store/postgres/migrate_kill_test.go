package postgres_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/internal/store/postgres"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// childDSN names, in the environment of the test binary run again as a
// child, the database TestMigrate_Child opens.
const childDSN = "LITEQUEUE_TEST_MIGRATE_CHILD"

// TestMigrate_Child is the child of TestMigrate_KilledMidway: it opens
// an engine on the database its environment names, upgrading its tables,
// prints "opened" and waits to be killed. Without the environment it does
// nothing.
func TestMigrate_Child(t *testing.T) {
	dsn := os.Getenv(childDSN)
	if dsn == "" {
		t.Skip("the child of TestMigrate_KilledMidway")
	}
	storetest.OpenServer(t, dsn)
	fmt.Println("opened")
	time.Sleep(time.Minute)
}

// pgIndexes lists the definitions of litequeue's indexes on db, and
// fails the test for one that is not valid.
func pgIndexes(t *testing.T, db *sqlx.DB) []string {
	t.Helper()
	var defs []string
	if err := db.Select(&defs, `SELECT indexname || ': ' || indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND indexname LIKE 'litequeue%' ORDER BY indexname`); err != nil {
		t.Fatal(err)
	}
	var invalid []string
	if err := db.Select(&invalid, `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE c.relname LIKE 'litequeue%' AND NOT (i.indisvalid AND i.indisready)`); err != nil {
		t.Fatal(err)
	}
	if len(invalid) > 0 {
		t.Errorf("invalid indexes: %v", invalid)
	}
	return defs
}

// toVersion6 turns db's tables of this version into version 6's: without
// version 7's tables and the counts' triggers, nor version 8's column and
// tables, with the indexes version 7
// replaced or dropped, and not the one it built, unless built, as an
// upgrade cut short after its build leaves them.
func toVersion6(t *testing.T, db *sqlx.DB, built bool) {
	t.Helper()
	if !built {
		db.MustExec(`DROP INDEX litequeue_jobs_pending`)
	}
	db.MustExec(`DROP TRIGGER IF EXISTS litequeue_jobs_count_insert ON litequeue_jobs;
		DROP TRIGGER IF EXISTS litequeue_jobs_count_delete ON litequeue_jobs;
		DROP TRIGGER IF EXISTS litequeue_jobs_count_update ON litequeue_jobs;
		DROP FUNCTION IF EXISTS litequeue_count();
		DROP TABLE IF EXISTS litequeue_counts, litequeue_outputs, litequeue_checkpoints, litequeue_progress;
		DROP TABLE IF EXISTS litequeue_deps, litequeue_waits;
		DROP INDEX IF EXISTS litequeue_jobs_waiting;
		ALTER TABLE litequeue_jobs DROP COLUMN IF EXISTS dependents`)
	db.MustExec(`CREATE INDEX litequeue_jobs_claim ON litequeue_jobs (priority DESC, run_at, id) WHERE state = 'pending';
		CREATE INDEX litequeue_jobs_next ON litequeue_jobs (kind, run_at) WHERE state = 'pending';
		CREATE INDEX litequeue_attempts_recent ON litequeue_attempts (finished_at);
		UPDATE litequeue_meta SET value = '6' WHERE name = 'schema_version'`)
}

// TestMigrate_KilledMidway SIGKILLs a child process in the middle of its
// upgrade of tables of version 6 to 7 — while it builds
// litequeue_jobs_pending, and, with the index built, while it drops
// those it replaces, after the step's transaction committed — each time
// while a transaction that read the jobs in a snapshot of its own holds
// the step back (a build waits for older snapshots, a drop for every
// transaction that locked the table; neither lock stops the step's
// transaction, which takes SHARE ROW EXCLUSIVE), and opens the tables
// afterwards: they have every job and history row, the indexes of new
// tables, each valid, and this binary's version.
func TestMigrate_KilledMidway(t *testing.T) {
	t.Parallel()
	if os.Getenv(childDSN) != "" {
		t.Skip("in the child")
	}
	const jobs = 20_000
	want := pgIndexes(t, openEngine(t).Info().Reads)
	dsn := pgtest.DSN(t)
	db := sqlx.MustOpen("pgx", dsn)
	defer db.Close()
	storetest.OpenServer(t, dsn).Close()
	db.MustExec(`INSERT INTO litequeue_jobs (queue, kind, payload, state, priority, max_tries, run_at, created_at, finished_at)
		SELECT 'q', 'k' || (i % 5), '', (ARRAY['pending', 'completed', 'dead'])[i % 3 + 1], i % 3, 3, i, i,
			CASE WHEN i % 3 > 0 THEN i END FROM generate_series(1, $1::int) AS i`, jobs)
	db.MustExec(`INSERT INTO litequeue_attempts (job_id, attempt, started_at, finished_at, outcome, kind, next_state)
		SELECT id, 1, created_at, created_at, 'completed', kind, state FROM litequeue_jobs`)
	for _, tc := range []struct {
		built bool   // the step's build done: the kill comes in its drops
		stmt  string // what the child runs when killed
	}{
		{false, "CREATE INDEX CONCURRENTLY IF NOT EXISTS litequeue_jobs_pending"},
		{true, "DROP INDEX CONCURRENTLY IF EXISTS litequeue_jobs_claim"},
	} {
		toVersion6(t, db, tc.built)
		holder := db.MustBegin()
		holder.MustExec(`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`)
		holder.MustExec(`SELECT COUNT(*) FROM litequeue_jobs WHERE id = 1`)
		killRunning(t, db, dsn, tc.stmt)
		holder.Rollback()
		eng := storetest.OpenServer(t, dsn)
		r := eng.Info().Reads
		var version, n, history int
		r.Get(&version, `SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`)
		r.Get(&n, `SELECT COUNT(*) FROM litequeue_jobs`)
		r.Get(&history, `SELECT COUNT(*) FROM litequeue_attempts`)
		if version != postgres.SchemaVersion || n != jobs || history != jobs {
			t.Errorf("killed in %q: version %d, %d jobs, %d history rows; want %d, %d, %d", tc.stmt, version, n, history, postgres.SchemaVersion, jobs, jobs)
		}
		if got := pgIndexes(t, r); !slices.Equal(got, want) {
			t.Errorf("killed in %q: indexes\n%s\nwant those of new tables\n%s", tc.stmt, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		eng.Close()
	}
}

// killRunning runs the child on the database at dsn and SIGKILLs it
// once its session runs stmt, which a transaction of the test holds
// back; it fails the test if the child opens first.
func killRunning(t *testing.T, db *sqlx.DB, dsn, stmt string) {
	t.Helper()
	child := storetest.StartChild(t, "TestMigrate_Child", childDSN, dsn)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if child.Opened() {
			t.Fatalf("the child opened before it ran %q", stmt)
		}
		var running bool
		if err := db.Get(&running, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND query LIKE $1 || '%')`, stmt); err != nil {
			t.Fatal(err)
		}
		if running {
			child.Kill()
			return
		}
	}
	t.Fatalf("the child never ran %q", stmt)
}
