package postgres_test

import (
	"context"
	"database/sql"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// open opens a Queue on dsn with the mock clock, closed at the end of the
// test.
func open(t *testing.T, dsn string, clk clock.Clock) *litequeue.Queue {
	t.Helper()
	q, err := postgres.Open(t.Context(), dsn, litequeue.Options{Clock: clk, Retry: litequeue.Policy{Jitter: litequeue.NoJitter}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// adminDB opens a pool of the test's own on dsn, closed at the end of the
// test.
func adminDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestOpen_Concurrently opens one new database from 8 goroutines at once:
// the advisory lock lets one create the tables, and every Open succeeds.
func TestOpen_Concurrently(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			q, err := postgres.Open(t.Context(), dsn, litequeue.Options{})
			if err == nil {
				err = q.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Open: %v", err)
		}
	}
}

// TestOpenDB_RefusesOtherDrivers refuses a pool that is not pgx's, naming
// its driver.
func TestOpenDB_RefusesOtherDrivers(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = postgres.OpenDB(t.Context(), db, litequeue.Options{})
	if err == nil || !strings.Contains(err.Error(), "not pgx's") {
		t.Fatalf("OpenDB on a SQLite pool = %v, want a refusal naming the driver", err)
	}
}

// TestOpenDB_AppTransaction runs EnqueueTx in the app's own transaction on
// its own pool: a rolled-back enqueue leaves no job, a committed one is
// there, and DB returns the app's pool.
func TestOpenDB_AppTransaction(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("pgx", pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q, err := postgres.OpenDB(t.Context(), db, litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if q.DB().DB != db {
		t.Fatal("DB() is not the app's pool")
	}
	for _, commit := range []bool{false, true} {
		tx, err := q.DB().BeginTxx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.EnqueueTx(t.Context(), tx, "k", commit); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	jobs, err := q.List(t.Context(), litequeue.Filter{})
	if err != nil || len(jobs) != 1 || string(jobs[0].Payload) != "true" {
		t.Fatalf("List = %v, %v; want the committed job only", jobs, err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(t.Context()); err != nil {
		t.Fatalf("Close closed the app's pool: %v", err)
	}
}

// TestOpenDB_PgxPool opens a Queue, as OpenDB's doc says, on an app's
// pgxpool.Pool through the *sql.DB that stdlib.OpenDBFromPool makes of it:
// a job enqueued through it is read back through the pool itself.
func TestOpenDB_PgxPool(t *testing.T) {
	t.Parallel()
	pool, err := pgxpool.New(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	q, err := postgres.OpenDB(t.Context(), db, litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	j, err := q.Enqueue(t.Context(), "k", "through the pool")
	if err != nil {
		t.Fatal(err)
	}
	var payload []byte
	if err := pool.QueryRow(t.Context(), `SELECT payload FROM litequeue_jobs WHERE id = $1`, j.ID).Scan(&payload); err != nil || string(payload) != `"through the pool"` {
		t.Fatalf("the job read through the pgx pool: payload %q, %v", payload, err)
	}
}

// TestUniqueKey_Concurrently enqueues one unique key from 16 goroutines on
// two Queues (two pools, as two processes would): one job, every other
// call a Duplicate of it, no error.
func TestUniqueKey_Concurrently(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	clk := clock.NewMock()
	qs := []*litequeue.Queue{open(t, dsn, clk), open(t, dsn, clk)}
	for round := range 20 {
		key := "key-" + strconv.Itoa(round)
		var wg sync.WaitGroup
		jobs := make([]*litequeue.Job, 16)
		errs := make([]error, 16)
		for i := range jobs {
			wg.Go(func() { jobs[i], errs[i] = qs[i%2].Enqueue(t.Context(), "k", i, litequeue.UniqueKey(key)) })
		}
		wg.Wait()
		fresh := 0
		for i, j := range jobs {
			if errs[i] != nil {
				t.Fatalf("round %d: Enqueue: %v", round, errs[i])
			}
			if j.ID != jobs[0].ID {
				t.Fatalf("round %d: job %d and job %d for one key", round, j.ID, jobs[0].ID)
			}
			if !j.Duplicate {
				fresh++
			}
		}
		if fresh != 1 {
			t.Fatalf("round %d: %d calls inserted, want 1", round, fresh)
		}
	}
}

// TestEnqueueMany_IDsInOrder: the IDs EnqueueMany returns follow the
// payloads, as Get reads them.
func TestEnqueueMany_IDsInOrder(t *testing.T) {
	t.Parallel()
	q := open(t, pgtest.DSN(t), clock.NewMock())
	payloads := make([]any, 500)
	for i := range payloads {
		payloads[i] = i
	}
	jobs, err := q.EnqueueMany(t.Context(), "k", payloads)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		got, err := q.Get(t.Context(), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := []byte(strconv.Itoa(i)); string(got.Payload) != string(want) {
			t.Fatalf("job %d (the %dth) holds %s, want %s", j.ID, i, got.Payload, want)
		}
		if i > 0 && j.ID <= jobs[i-1].ID {
			t.Fatalf("IDs out of order: %d after %d", j.ID, jobs[i-1].ID)
		}
	}
}

// startWork runs Work on q, its handler of kind "k" sending the ID of
// each job it starts, until the end of the test.
func startWork(t *testing.T, q *litequeue.Queue) <-chan int64 {
	started := make(chan int64, 10)
	q.Handle("k", func(ctx context.Context, j *litequeue.Job) error {
		started <- j.ID
		return nil
	})
	runWork(t, q, litequeue.WorkerOptions{})
	return started
}

// runWork runs Work on q with opts until the test ends, and checks that
// it then returns nil.
func runWork(t *testing.T, q *litequeue.Queue, opts litequeue.WorkerOptions) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Work: %v", err)
		}
	})
}

// waitFor waits, up to 10 s of real time, for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// workPair is a Work on one Queue and a producer on another (another
// pool, as another machine would have), on one database with the mock
// clock standing still, and a connection of the test's own to it.
type workPair struct {
	worker, producer *litequeue.Queue
	started          <-chan int64 // the IDs of the jobs Work starts
	admin            *sql.DB
}

func newWorkPair(t *testing.T) *workPair {
	dsn := pgtest.DSN(t)
	clk := clock.NewMock()
	w := &workPair{worker: open(t, dsn, clk), producer: open(t, dsn, clk)}
	w.started = startWork(t, w.worker)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	w.admin = admin
	return w
}

// waitIdle waits until Work has settled the job with the given ID (none
// for 0) and its watch listens on the server: with the mock clock
// standing still, only a notification can start the next job.
func (w *workPair) waitIdle(t *testing.T, id int64) {
	t.Helper()
	if id != 0 {
		waitFor(t, "the job to complete", func() bool {
			j, err := w.worker.Get(t.Context(), id)
			return err == nil && j.State == litequeue.Completed
		})
	}
	waitFor(t, "Work to listen", func() bool {
		var n int
		err := w.admin.QueryRow(`SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN %' AND state = 'idle'`).Scan(&n)
		return err == nil && n > 0
	})
}

// enqueueAndStart enqueues a job on the producer and waits up to 10 s for
// Work to start it, failing the test, with when, if it does not.
func (w *workPair) enqueueAndStart(t *testing.T, payload int, when string) int64 {
	t.Helper()
	j, err := w.producer.Enqueue(t.Context(), "k", payload)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	select {
	case id := <-w.started:
		if id != j.ID {
			t.Fatalf("started job %d, want %d", id, j.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("job %d enqueued by another Queue did not start %s", j.ID, when)
	}
	return j.ID
}

// TestWork_WakesOnNotify: a Work on one Queue starts a job that another
// Queue (another pool, as another machine) enqueued, with the mock clock
// standing still: the notification woke it, not a poll.
func TestWork_WakesOnNotify(t *testing.T) {
	t.Parallel()
	w := newWorkPair(t)
	var last int64
	for i := range 5 {
		w.waitIdle(t, last)
		last = w.enqueueAndStart(t, i, "with the clock standing still")
	}
}

// TestWriter_LostConnection terminates the writer's connection on the
// server: the next writes succeed on a new one, and nothing is lost.
func TestWriter_LostConnection(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	q := open(t, dsn, clock.NewMock())
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var ids []int64
	for round := range 3 {
		j, err := q.Enqueue(t.Context(), "k", round)
		if err != nil {
			t.Fatalf("round %d: Enqueue before the kill: %v", round, err)
		}
		ids = append(ids, j.ID)
		// Every other backend of this database is the Queue's.
		if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		j, err = q.Enqueue(t.Context(), "k", round)
		if err != nil {
			t.Fatalf("round %d: Enqueue after the connection was killed: %v", round, err)
		}
		ids = append(ids, j.ID)
	}
	for _, id := range ids {
		if _, err := q.Get(t.Context(), id); err != nil {
			t.Errorf("job %d: %v", id, err)
		}
	}
	var n int
	if err := admin.QueryRow(`SELECT COUNT(*) FROM litequeue_jobs`).Scan(&n); err != nil || n != len(ids) {
		t.Fatalf("%d jobs in the table (%v), want %d", n, err, len(ids))
	}
}

// TestCoreLinksNoPgx lists what a program of the file alone links
// (examples/schedule): no PostgreSQL driver, which only this package
// brings in; this package does link it.
func TestCoreLinksNoPgx(t *testing.T) {
	t.Parallel()
	for pkg, want := range map[string]bool{
		"github.com/litequeue/litequeue/examples/schedule": false,
		"github.com/litequeue/litequeue/postgres":          true,
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		links := false
		for _, dep := range strings.Fields(string(out)) {
			links = links || strings.HasPrefix(dep, "github.com/jackc/")
		}
		if links != want {
			t.Errorf("%s links pgx: %v, want %v", pkg, links, want)
		}
	}
}

// TestHealth_OnServer: Health reads the schema version and the rows; a
// file's figures stay zero.
func TestHealth_OnServer(t *testing.T) {
	t.Parallel()
	q := open(t, pgtest.DSN(t), clock.NewMock())
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	h, err := q.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !h.OK() || h.SchemaVersion != 7 || h.Jobs[litequeue.Pending] != 1 || h.HistoryRows != 0 || h.Keys != 0 || h.Integrity != nil {
		t.Fatalf("Health = %+v, want OK, version 6, one pending job, no file figures", h)
	}
}

// TestWork_ListenerLost terminates every connection of the Queues on the
// server, the one Work listens on among them, with the mock clock
// standing still: Work listens again and starts a job enqueued after the
// loss; nothing waits for a poll of the mock clock.
func TestWork_ListenerLost(t *testing.T) {
	t.Parallel()
	w := newWorkPair(t)
	var last int64
	for round := range 3 {
		w.waitIdle(t, last)
		if _, err := w.admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
			t.Fatal(err)
		}
		last = w.enqueueAndStart(t, round, "after the listening connection was lost")
	}
}

// TestOpen_MigratesVersion2 opens tables of schema version 2, whose index
// of finished jobs in ID order held completed jobs too: Open replaces it
// with version 3's, of the jobs that stopped short of completing, keeps
// the jobs, and writes the new version.
func TestOpen_MigratesVersion2(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	q := open(t, dsn, clock.NewMock())
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	fresh := indexDefs(t, q)
	q.Close()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, stmt := range []string{
		`DROP INDEX litequeue_jobs_stopped`,
		`CREATE INDEX litequeue_jobs_list ON litequeue_jobs (state, id) WHERE finished_at IS NOT NULL`,
		`UPDATE litequeue_meta SET value = '2' WHERE name = 'schema_version'`,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	q = open(t, dsn, clock.NewMock())
	var indexes []string
	if err := q.DB().Select(&indexes, `SELECT indexname FROM pg_indexes
		WHERE schemaname = current_schema() AND indexname IN ('litequeue_jobs_list', 'litequeue_jobs_stopped')`); err != nil {
		t.Fatal(err)
	}
	if want := []string{"litequeue_jobs_stopped"}; !slices.Equal(indexes, want) {
		t.Errorf("indexes after Open: %v, want %v", indexes, want)
	}
	if got := indexDefs(t, q); !slices.Equal(got, fresh) {
		t.Errorf("indexes after the upgrade:\n%s\nwant those of a new schema:\n%s", strings.Join(got, "\n"), strings.Join(fresh, "\n"))
	}
	h, err := q.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.SchemaVersion != 7 || h.Jobs[litequeue.Pending] != 1 {
		t.Errorf("Health = %+v, want version 7 and the one pending job", h)
	}
}

// indexDefs are the definitions of the indexes of litequeue's tables.
func indexDefs(t *testing.T, q *litequeue.Queue) []string {
	t.Helper()
	return column(t, q, `SELECT indexdef FROM pg_indexes
		WHERE schemaname = current_schema() AND tablename LIKE 'litequeue%' ORDER BY indexname`)
}

// column reads the one column of query's rows on q's database.
func column(t *testing.T, q *litequeue.Queue, query string) []string {
	t.Helper()
	var values []string
	if err := q.DB().Select(&values, query); err != nil {
		t.Fatal(err)
	}
	return values
}

// TestOpen_NewerSchema refuses tables of a schema version this binary
// does not know, and OpenExisting a database without litequeue's tables.
func TestOpen_NewerSchema(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	if _, err := postgres.OpenExisting(t.Context(), dsn, litequeue.Options{}); err == nil || !strings.Contains(err.Error(), "no litequeue tables") {
		t.Fatalf("OpenExisting of an empty database = %v, want a refusal", err)
	}
	open(t, dsn, clock.NewMock()).Close()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`UPDATE litequeue_meta SET value = '99' WHERE name = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), dsn, litequeue.Options{}); err == nil || !strings.Contains(err.Error(), "version 99 is newer") {
		t.Fatalf("Open of a newer schema = %v, want a refusal naming the version", err)
	}
}

// TestOpen_BesideOpenTransaction opens a second Queue while the app holds
// a transaction that wrote a job: Open of current tables takes no lock on
// them, so it neither waits for that transaction nor stalls the writers
// behind it.
func TestOpen_BesideOpenTransaction(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	q := open(t, dsn, clock.NewMock())
	tx, err := q.DB().BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := q.EnqueueTx(t.Context(), tx, "k", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	q2, err := postgres.Open(ctx, dsn, litequeue.Options{})
	if err != nil {
		t.Fatalf("Open beside an open transaction: %v", err)
	}
	q2.Close()
}
