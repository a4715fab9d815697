package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// oldTables makes litequeue's tables of schema version 2 or 3 in the
// database at dsn, from testdata/schema-v3.sql (version 3 as it was
// released; version 2 had litequeue_jobs_list where version 3 has
// litequeue_jobs_stopped), with jobs rows in them, a third each
// completed, dead and pending. It returns a pool on the database, closed
// at the end of the test.
func oldTables(t *testing.T, dsn string, version, jobs int) *sql.DB {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join("testdata", "schema-v3.sql"))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	exec := func(stmt string, args ...any) {
		t.Helper()
		if _, err := admin.Exec(stmt, args...); err != nil {
			t.Fatalf("%.60s…: %v", stmt, err)
		}
	}
	exec(string(ddl))
	exec(`INSERT INTO litequeue_meta (name, value) VALUES ('schema_version', '3')`)
	exec(`INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, created_at, run_at, finished_at)
		SELECT 'default', 'k', convert_to(i::text, 'UTF8'), (ARRAY['completed', 'dead', 'pending'])[i % 3 + 1],
			8, i, i, CASE WHEN i % 3 < 2 THEN i END
		FROM generate_series(1, $1::int) AS i`, jobs)
	if version == 2 {
		exec(`DROP INDEX litequeue_jobs_stopped`)
		exec(`CREATE INDEX litequeue_jobs_list ON litequeue_jobs (state, id) WHERE finished_at IS NOT NULL`)
		exec(`UPDATE litequeue_meta SET value = '2' WHERE name = 'schema_version'`)
	}
	return admin
}

// newTables describes litequeue's tables as a new database has them: the
// definitions of their indexes, and the schema version.
func newTables(t *testing.T) (indexes []string, version int) {
	t.Helper()
	q := open(t, pgtest.DSN(t), clock.NewMock())
	h, err := q.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return indexDefs(t, q), h.SchemaVersion
}

// checkUpgraded checks that the tables at dsn are as a new database has
// them, each index valid, with the jobs counted.
func checkUpgraded(t *testing.T, dsn string, jobs int) {
	t.Helper()
	wantIndexes, wantVersion := newTables(t)
	q := open(t, dsn, clock.NewMock())
	if diff := cmp.Diff(wantIndexes, indexDefs(t, q)); diff != "" {
		t.Errorf("indexes after the upgrade (-new database +upgraded):\n%s", diff)
	}
	fresh := open(t, pgtest.DSN(t), clock.NewMock())
	if diff := cmp.Diff(tableNames(t, fresh), tableNames(t, q)); diff != "" {
		t.Errorf("tables after the upgrade (-new database +upgraded):\n%s", diff)
	}
	if diff := cmp.Diff(triggerDefs(t, fresh), triggerDefs(t, q)); diff != "" {
		t.Errorf("triggers after the upgrade (-new database +upgraded):\n%s", diff)
	}
	var invalid []string
	if err := q.DB().Select(&invalid, `SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE c.relname LIKE 'litequeue%' AND NOT (i.indisvalid AND i.indisready)`); err != nil {
		t.Fatal(err)
	}
	if len(invalid) > 0 {
		t.Errorf("invalid indexes after the upgrade: %v", invalid)
	}
	h, err := q.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n, err := q.Count(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if h.SchemaVersion != wantVersion || n != jobs {
		t.Errorf("after the upgrade: version %d, %d jobs; want %d, %d", h.SchemaVersion, n, wantVersion, jobs)
	}
}

// heldUpgrade makes tables of version 2 with jobs rows in them in a new
// database, and holds there a transaction that wrote a job (holdWrite),
// which an index build waits for.
func heldUpgrade(t *testing.T, jobs int) (dsn string, admin *sql.DB, holder *sql.Tx) {
	t.Helper()
	dsn = pgtest.DSN(t)
	admin = oldTables(t, dsn, 2, jobs)
	return dsn, admin, holdWrite(t, admin)
}

// conn returns a connection of admin's, closed at the end of the test (a
// statement that runs on it under the test's context is cancelled then).
func conn(t *testing.T, admin *sql.DB) *sql.Conn {
	t.Helper()
	c, err := admin.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// holdWrite begins a transaction on admin that inserts a job and keeps it
// open: an index build waits for it to end. It is rolled back at the end
// of the test, if it is still open.
func holdWrite(t *testing.T, admin *sql.DB) *sql.Tx {
	t.Helper()
	tx, err := admin.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.Exec(insertJobSQL); err != nil {
		t.Fatal(err)
	}
	return tx
}

// insertJobSQL inserts a pending job, as an enqueue of any process does.
const insertJobSQL = `INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, created_at, run_at)
	VALUES ('default', 'k', '\x6e756c6c', 'pending', 8, 0, 0)`

// waitBuilding waits until a session builds the index, waiting for a lock
// (the transaction of holdWrite), and returns its pid.
func waitBuilding(t *testing.T, admin *sql.DB, index string) int {
	t.Helper()
	var pid int
	waitFor(t, "the build of "+index+" to wait", func() bool {
		err := admin.QueryRow(`SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'CREATE INDEX %' || $1 || '%'
			  AND wait_event_type = 'Lock'`, index).Scan(&pid)
		return err == nil
	})
	return pid
}

// openClose opens a Queue on dsn, upgrading its tables, and closes it.
func openClose(ctx context.Context, dsn string) error {
	q, err := postgres.Open(ctx, dsn, litequeue.Options{})
	if err != nil {
		return err
	}
	return q.Close()
}

// wait waits up to a minute of real time for the error of an Open.
func wait(t *testing.T, opened <-chan error) {
	t.Helper()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Open did not return within a minute")
	}
}

// TestOpen_UpgradeBesideWriters upgrades tables of version 2 while
// another session writes to litequeue_jobs: the build of version 3's
// index (litequeue_jobs_stopped), held up by a transaction that wrote a
// job, takes no lock that stops those writes, each of which completes
// while the build waits; once that transaction ends the upgrade
// finishes, with every index valid and every job kept. A build in the
// migration's transaction took a SHARE lock, and every INSERT queued
// behind it.
func TestOpen_UpgradeBesideWriters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, admin, holder := heldUpgrade(t, 3000)
	writer := conn(t, admin)
	opened := make(chan error, 1)
	go func() { opened <- openClose(ctx, dsn) }()
	builder := waitBuilding(t, admin, "litequeue_jobs_stopped")

	var pid int
	if err := writer.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	const writes = 20
	for i := range writes {
		done := make(chan error, 1)
		go func() {
			_, err := writer.ExecContext(ctx, insertJobSQL)
			done <- err
		}()
		var blocked bool
		waitFor(t, "the INSERT to complete or wait", func() bool {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("INSERT %d: %v", i, err)
				}
				return true
			default:
			}
			admin.QueryRow(`SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&blocked)
			return blocked
		})
		if blocked {
			holder.Rollback() // lets the build, then the INSERT, go on
			<-done
			t.Fatalf("INSERT %d into litequeue_jobs waited for a lock while the upgrade built its index", i)
		}
	}
	var building bool
	if err := admin.QueryRow(`SELECT EXISTS (SELECT FROM pg_stat_progress_create_index WHERE pid = $1)`, builder).Scan(&building); err != nil || !building {
		t.Fatalf("the build was over before the writes were (%v): the test proves nothing", err)
	}
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	wait(t, opened)
	checkUpgraded(t, dsn, 3000+1+writes)
}

// TestOpen_UpgradeConcurrently upgrades tables of version 2 from six
// Opens at once, each on a pool of its own as processes on several
// machines would, while a transaction holds up the index build: one
// upgrades, the others wait for it without holding a snapshot that the
// concurrent build would wait for in turn (a deadlock), and every Open
// succeeds.
func TestOpen_UpgradeConcurrently(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, admin, holder := heldUpgrade(t, 300)
	const n = 6
	opened := make(chan error, n)
	for range n {
		go func() { opened <- openClose(ctx, dsn) }()
	}
	builder := waitBuilding(t, admin, "litequeue_jobs_stopped")
	waitFor(t, "the other Opens to wait for the upgrade", func() bool {
		var waiting int
		err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE '%advisory%lock%' AND pid <> $1`, builder).Scan(&waiting)
		return err == nil && waiting >= n-1
	})
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	for range n {
		wait(t, opened)
	}
	checkUpgraded(t, dsn, 300+1)
}

// TestOpen_UpgradeRebuildsInvalidIndex upgrades tables of version 2 on
// which a concurrent build of litequeue_jobs_stopped was interrupted (here
// cancelled), leaving an INVALID index of that name, which the server
// keeps up to date but never reads: the upgrade drops it and builds it
// again, where CREATE INDEX IF NOT EXISTS would keep it as it is.
func TestOpen_UpgradeRebuildsInvalidIndex(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn, admin, holder := heldUpgrade(t, 300)
	builder := conn(t, admin)
	built := make(chan error, 1)
	go func() {
		_, err := builder.ExecContext(ctx, `CREATE INDEX CONCURRENTLY litequeue_jobs_stopped
			ON litequeue_jobs (state, id) WHERE finished_at IS NOT NULL AND state <> 'completed'`)
		built <- err
	}()
	pid := waitBuilding(t, admin, "litequeue_jobs_stopped")
	if _, err := admin.Exec(`SELECT pg_cancel_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	if err := <-built; err == nil {
		t.Fatal("the build was not interrupted")
	}
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	var valid bool
	if err := admin.QueryRow(`SELECT indisvalid FROM pg_index WHERE indexrelid = 'litequeue_jobs_stopped'::regclass`).Scan(&valid); err != nil || valid {
		t.Fatalf("the interrupted build left a valid index (%v): the test proves nothing", err)
	}
	if err := openClose(ctx, dsn); err != nil {
		t.Fatalf("Open: %v", err)
	}
	checkUpgraded(t, dsn, 300)
}

// tableNames are the names of litequeue's tables on q's database.
func tableNames(t *testing.T, q *litequeue.Queue) []string {
	t.Helper()
	return column(t, q, `SELECT tablename FROM pg_tables
		WHERE schemaname = current_schema() AND tablename LIKE 'litequeue%' ORDER BY tablename`)
}

// version4Tables makes tables of version 4 in a new database, with one
// pending job of kind k in them: those of this version without
// litequeue_kinds, as a binary of version 4 left them, or, if stepped,
// with it, as an upgrade killed after its step's commit and before it
// wrote the new version leaves them.
func version4Tables(t *testing.T, stepped bool) (dsn string) {
	t.Helper()
	dsn = pgtest.DSN(t)
	q := open(t, dsn, clock.NewMock())
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	q.Close()
	admin := adminDB(t, dsn)
	stmts := []string{`UPDATE litequeue_meta SET value = '4' WHERE name = 'schema_version'`}
	stmts = append(stmts, version6Tables...)
	stmts = append(stmts, version7Tables...)
	if !stepped {
		stmts = append(stmts, `DROP TABLE litequeue_kinds`)
	}
	for _, stmt := range stmts {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return dsn
}

// TestOpen_UpgradeVersion4 upgrades tables of version 4, which have no
// litequeue_kinds, and those of an upgrade to version 5 killed after its
// step: each Open makes them as a new database has them, keeps the job,
// and a worker's RunDue on them records its kind, which a Queue with
// RefuseUnknownKinds then accepts.
func TestOpen_UpgradeVersion4(t *testing.T) {
	t.Parallel()
	for _, stepped := range []bool{false, true} {
		dsn := version4Tables(t, stepped)
		checkUpgraded(t, dsn, 1)
		worker := open(t, dsn, clock.NewMock())
		worker.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
		if n, err := worker.RunDue(t.Context()); err != nil || n != 1 {
			t.Fatalf("stepped %v: RunDue = %d, %v; want the one job run", stepped, n, err)
		}
		producer, err := postgres.Open(t.Context(), dsn, litequeue.Options{RefuseUnknownKinds: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = producer.Enqueue(t.Context(), "k", nil)
		producer.Close()
		if err != nil {
			t.Fatalf("stepped %v: enqueue of the kind recorded: %v", stepped, err)
		}
	}
}

// triggerDefs are the definitions of the triggers on litequeue_jobs of
// q's database and of the function they call.
func triggerDefs(t *testing.T, q *litequeue.Queue) []string {
	t.Helper()
	return column(t, q, `SELECT pg_get_triggerdef(oid) FROM pg_trigger
		WHERE tgrelid = 'litequeue_jobs'::regclass AND NOT tgisinternal
		UNION ALL SELECT pg_get_functiondef('litequeue_notify'::regproc) ORDER BY 1`)
}

// version5Wakeups are the wake-up function and trigger of version 5, as
// released: a row trigger, which called the function for each pending
// row.
var version5Wakeups = []string{`CREATE OR REPLACE FUNCTION litequeue_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	channel text := 'litequeue_' || TG_TABLE_SCHEMA;
BEGIN
	IF octet_length(channel) > 63 THEN
		channel := 'litequeue_' || md5(TG_TABLE_SCHEMA);
	END IF;
	PERFORM pg_notify(channel, '');
	RETURN NULL;
END $$`, `CREATE OR REPLACE TRIGGER litequeue_jobs_notify
	AFTER INSERT OR UPDATE OF state ON litequeue_jobs
	FOR EACH ROW WHEN (NEW.state = 'pending')
	EXECUTE FUNCTION litequeue_notify()`, `DROP TRIGGER litequeue_jobs_notify_update ON litequeue_jobs`}

// version6Tables drops the tables that version 6 added.
var version6Tables = []string{`DROP TABLE litequeue_policies`, `DROP TABLE litequeue_throughput`, `DROP TABLE litequeue_workers`}

// version7Tables drops the counts that version 7 added, with their triggers.
var version7Tables = []string{`DROP FUNCTION litequeue_count() CASCADE`, `DROP TABLE litequeue_counts`}

// versionTables makes tables of version (5 or 6) in a new database, with
// one pending job of kind k in them, whose ID it returns: as a binary of
// that version left them (for 5, with its row trigger), or, if stepped,
// with the later versions' tables and triggers, as an upgrade killed after
// its steps' commits and before it wrote the new version leaves them.
func versionTables(t *testing.T, version int, stepped bool) (dsn string, id int64) {
	t.Helper()
	dsn = pgtest.DSN(t)
	q := open(t, dsn, clock.NewMock())
	j, err := q.Enqueue(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	admin := adminDB(t, dsn)
	stmts := []string{fmt.Sprintf(`UPDATE litequeue_meta SET value = '%d' WHERE name = 'schema_version'`, version)}
	if !stepped && version < 6 {
		stmts = append(stmts, version5Wakeups...)
		stmts = append(stmts, version6Tables...)
	}
	if !stepped {
		stmts = append(stmts, version7Tables...)
	}
	for _, stmt := range stmts {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return dsn, j.ID
}

// TestOpen_UpgradeVersion5 upgrades tables of version 5, whose trigger
// notified per row, and those of an upgrade to version 6 killed after its
// step: each Open makes the triggers as a new database has them and
// keeps the job; a Work on them, the clock standing still, listens and
// starts a job that another Queue enqueues, woken as before; and an
// EnqueueMany of 1,000 jobs sends one notification, counted by a
// listener of the test's own up to a fence sent after it.
func TestOpen_UpgradeVersion5(t *testing.T) {
	t.Parallel()
	for _, stepped := range []bool{false, true} {
		dsn, kept := versionTables(t, 5, stepped)
		checkUpgraded(t, dsn, 1)
		admin := adminDB(t, dsn)
		clk := clock.NewMock()
		started := startWork(t, open(t, dsn, clk))
		var channel string
		for _, ch := range listening(t, admin, 1) {
			channel = ch
		}
		if got := <-started; got != kept {
			t.Fatalf("stepped %v: Work started job %d, want the job kept, %d", stepped, got, kept)
		}
		producer := open(t, dsn, clk)
		j, err := producer.Enqueue(t.Context(), "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-started:
			if id != j.ID {
				t.Fatalf("stepped %v: started job %d, want %d", stepped, id, j.ID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("stepped %v: the job enqueued did not start, the clock standing still", stepped)
		}
		l := listen(t, dsn, channel)
		if _, err := producer.EnqueueMany(t.Context(), "other", make([]any, 1000)); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(`SELECT pg_notify($1, 'fence')`, channel); err != nil {
			t.Fatal(err)
		}
		if n := l.until(t, "fence"); n != 1 {
			t.Errorf("stepped %v: %d notifications for an EnqueueMany of 1,000 jobs, want 1", stepped, n)
		}
	}
}

// TestOpen_UpgradeVersion5Records upgrades tables of version 5, which
// have no litequeue_policies or litequeue_throughput, and those of an
// upgrade to version 6 killed after its step: on each, a worker's RunDue
// runs the job kept, records its policies and counts the run.
func TestOpen_UpgradeVersion5Records(t *testing.T) {
	t.Parallel()
	for _, stepped := range []bool{false, true} {
		dsn, _ := versionTables(t, 5, stepped)
		checkUpgraded(t, dsn, 1)
		worker := open(t, dsn, clock.NewMock())
		worker.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
		if n, err := worker.RunDue(t.Context()); err != nil || n != 1 {
			t.Fatalf("stepped %v: RunDue = %d, %v; want the one job run", stepped, n, err)
		}
		got, err := worker.RecordedPolicies(t.Context())
		if err != nil || len(got) != 2 || got[0].Scope != "default" || got[1].Name != "k" {
			t.Fatalf("stepped %v: RecordedPolicies = %+v, %v; want the default and the kind k", stepped, got, err)
		}
		points, err := worker.Throughput(t.Context(), time.Minute, time.Minute)
		if err != nil || len(points) != 1 || points[0].Completed != 1 {
			t.Fatalf("stepped %v: Throughput = %+v, %v; want the one run completed", stepped, points, err)
		}
	}
}
