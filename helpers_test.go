package litequeue_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

// epoch is where the tests' mock clocks start.
var epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// newMock returns a mock clock set to epoch.
func newMock() *clock.Mock {
	c := clock.NewMock()
	c.Set(epoch)
	return c
}

// events records every event a Queue fires.
type events struct {
	mu   sync.Mutex
	list []litequeue.Event
}

func (e *events) record(ev litequeue.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, ev)
}

// types returns the recorded event types, in order.
func (e *events) types() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ts []string
	for _, ev := range e.list {
		ts = append(ts, ev.Type)
	}
	return ts
}

// count returns how many events of the type were recorded.
func (e *events) count(typ string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.list {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// openQueue opens a queue on a new file in t.TempDir with a mock clock and
// no jitter unless opts says otherwise, and closes it at the end of the test.
func openQueue(tb testing.TB, opts litequeue.Options) (*litequeue.Queue, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "queue.db")
	return openAt(tb, path, opts), path
}

// openAt opens a queue on path, closed at the end of the test.
func openAt(tb testing.TB, path string, opts litequeue.Options) *litequeue.Queue {
	tb.Helper()
	if opts.Clock == nil {
		opts.Clock = newMock()
	}
	if opts.Retry.Jitter == "" {
		opts.Retry.Jitter = litequeue.NoJitter
	}
	q, err := openBackend(tb, path, opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { q.Close() })
	return q
}

// enqueue adds a job and fails the test on error.
func enqueue(tb testing.TB, q *litequeue.Queue, kind string, payload any, opts ...litequeue.EnqueueOption) *litequeue.Job {
	tb.Helper()
	j, err := q.Enqueue(tb.Context(), kind, payload, opts...)
	if err != nil {
		tb.Fatalf("Enqueue(%q): %v", kind, err)
	}
	return j
}

// get reads a job and fails the test on error.
func get(tb testing.TB, q *litequeue.Queue, id int64) *litequeue.Job {
	tb.Helper()
	j, err := q.Get(tb.Context(), id)
	if err != nil {
		tb.Fatalf("Get(%d): %v", id, err)
	}
	return j
}

// history reads a job's history and fails the test on error.
func history(tb testing.TB, q *litequeue.Queue, id int64) []litequeue.Attempt {
	tb.Helper()
	h, err := q.History(tb.Context(), id)
	if err != nil {
		tb.Fatalf("History(%d): %v", id, err)
	}
	return h
}

// outcomes lists the outcome of each row of a history, in order.
func outcomes(h []litequeue.Attempt) []litequeue.Outcome {
	out := make([]litequeue.Outcome, len(h))
	for i, a := range h {
		out[i] = a.Outcome
	}
	return out
}

// runDue calls RunDue and fails the test on error.
func runDue(tb testing.TB, q *litequeue.Queue) int {
	tb.Helper()
	n, err := q.RunDue(tb.Context())
	if err != nil {
		tb.Fatalf("RunDue: %v", err)
	}
	return n
}

// waitFor polls cond until it holds, failing the test after a real-time
// deadline. For goroutines the test cannot step.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	waitWithin(tb, 10*time.Second, what, cond)
}

// waitClosed waits for ch to be closed, failing the test after a
// real-time deadline.
func waitClosed(tb testing.TB, what string, ch <-chan struct{}) {
	tb.Helper()
	waitFor(tb, what, func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	})
}

// timerClock is a mock clock that keeps the length and the end of every
// timer that the code under test sets on it, in order, so that a test can
// move it to the end of a wait it knows of, such as Work's shutdown grace,
// once the wait has begun, and no further.
type timerClock struct {
	*clock.Mock
	mu     sync.Mutex
	timers []setTimer
}

// setTimer is a timer set on a timerClock.
type setTimer struct {
	d   time.Duration
	end time.Time
}

// newTimerClock returns a timerClock set to epoch.
func newTimerClock() *timerClock { return &timerClock{Mock: newMock()} }

// Timer sets a timer of length d on the mock clock and keeps its end.
func (c *timerClock) Timer(d time.Duration) *clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.Mock.Now()
	c.timers = append(c.timers, setTimer{d, now.Add(d)})
	return c.Mock.Timer(d)
}

// mark returns how many timers have been set on c: a test marks the
// clock before it begins a wait, and runs out a timer set after the mark.
func (c *timerClock) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// runOut waits until the code under test has set a timer of length d on
// clk after the mark from, and moves the clock to its end: a wait that
// the clock ends run out, and no further, so that the next one (the
// release after a grace) does not run out too before the test's
// goroutines have seen the first end. The clock stands still meanwhile.
// It fails the test after a real-time deadline.
func runOut(tb testing.TB, clk *timerClock, from int, d time.Duration) {
	tb.Helper()
	var end time.Time
	waitFor(tb, fmt.Sprintf("a timer of %v to be set", d), func() bool {
		clk.mu.Lock()
		defer clk.mu.Unlock()
		for _, t := range clk.timers[from:] {
			if t.d == d {
				end = t.end
				return true
			}
		}
		return false
	})
	clk.Add(max(0, end.Sub(clk.Now())))
}

// waitWithin is waitFor with a deadline of d, for long runs of work.
func waitWithin(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	litequeue.WaitWithin(tb, d, what, cond)
}

// doomed is a handler whose jobs die at once.
func doomed(ctx context.Context, job *litequeue.Job) error {
	return litequeue.Permanent(errors.New("doomed"))
}

// historyRows counts a job's rows in litequeue_attempts, through DB():
// History cannot tell a purged job's rows from none.
func historyRows(tb testing.TB, q *litequeue.Queue, id int64) int {
	tb.Helper()
	var n int
	if err := q.DB().Get(&n, q.DB().Rebind(`SELECT COUNT(*) FROM litequeue_attempts WHERE job_id = ?`), id); err != nil {
		tb.Fatal(err)
	}
	return n
}

// itoa formats a job ID as error messages do.
func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// runResult is what a RunDue call on another goroutine returned.
type runResult struct {
	n   int
	err error
}

// runDueAsync calls RunDue on a goroutine of its own and delivers its
// result on the channel.
func runDueAsync(q *litequeue.Queue) <-chan runResult {
	done := make(chan runResult, 1)
	go func() {
		n, err := q.RunDue(context.Background())
		done <- runResult{n, err}
	}()
	return done
}

// exists reports whether the job is still stored.
func exists(tb testing.TB, q *litequeue.Queue, id int64) bool {
	tb.Helper()
	_, err := q.Get(tb.Context(), id)
	if errors.Is(err, litequeue.ErrNotFound) {
		return false
	}
	if err != nil {
		tb.Fatal(err)
	}
	return true
}

// gate is a handler that signals when it starts and then blocks until the
// test opens it: a worker caught in the middle of a run.
type gate struct{ started, release chan struct{} }

func newGate() *gate { return &gate{started: make(chan struct{}), release: make(chan struct{})} }

// handle is the gate's Handler, for one run.
func (g *gate) handle(ctx context.Context, job *litequeue.Job) error {
	close(g.started)
	<-g.release
	return nil
}

// openReadOnly opens the file at path read-only, closed at the end of
// the test.
func openReadOnly(tb testing.TB, path string) *litequeue.Queue {
	tb.Helper()
	q, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { q.Close() })
	return q
}

// The suite runs on the file, and, with LITEQUEUE_TEST_BACKEND=postgres,
// on the PostgreSQL server at LITEQUEUE_TEST_POSTGRES: every test that
// opens its queues with openQueue or openAt then runs on the server, each
// "file" a schema of its own, so that two Queues opened on one path share
// their jobs as on the file. Tests of the file itself call fileOnly.
var onPostgres = serverRun()

// serverRun reports whether LITEQUEUE_TEST_BACKEND says the suite runs on
// PostgreSQL. fileOnly and openBackend, which nearly every test calls,
// read it at test time: go test keys a cached result on the variables
// that the tests read then (not at package init, when onPostgres is set),
// so that a result on the file never stands in for a run on the server.
func serverRun() bool { return os.Getenv("LITEQUEUE_TEST_BACKEND") == "postgres" }

// fileOnly skips a test of what only the file has when the suite runs on
// PostgreSQL.
func fileOnly(tb testing.TB, why string) {
	tb.Helper()
	if serverRun() {
		tb.Skipf("file only: %s", why)
	}
}

var pg struct {
	once    sync.Once
	db      *sql.DB
	err     error
	schemas sync.Map // path → DSN
	n       atomic.Int64
}

// tb is what openBackend needs of a test: a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}

// openBackend opens the Queue for path on the suite's backend.
func openBackend(tb tb, path string, opts litequeue.Options) (*litequeue.Queue, error) {
	if !serverRun() {
		return litequeue.Open(path, opts)
	}
	return postgres.Open(context.Background(), schemaFor(tb, path), opts)
}

// schemaFor returns the DSN of the schema that stands for the file at
// path, creating it on first use and dropping it at the end of the test.
func schemaFor(tb tb, path string) string {
	tb.Helper()
	if dsn, ok := pg.schemas.Load(path); ok {
		return dsn.(string)
	}
	base := os.Getenv("LITEQUEUE_TEST_POSTGRES")
	if base == "" {
		tb.Fatal("LITEQUEUE_TEST_BACKEND=postgres needs LITEQUEUE_TEST_POSTGRES, the URL of a server to test on")
	}
	pg.once.Do(func() { pg.db, pg.err = sql.Open("pgx", base) })
	if pg.err != nil {
		tb.Fatal(pg.err)
	}
	name := fmt.Sprintf("lq_%d_%d", os.Getpid(), pg.n.Add(1))
	if _, err := pg.db.Exec(`CREATE SCHEMA ` + name); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		pg.schemas.Delete(path)
		if _, err := pg.db.Exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	v := u.Query()
	v.Set("search_path", name)
	u.RawQuery = v.Encode()
	pg.schemas.Store(path, u.String())
	return u.String()
}

// ok is a handler that completes its job.
func ok(ctx context.Context, job *litequeue.Job) error { return nil }

// startWork runs q.Work in a goroutine and returns a function that stops
// it and returns Work's error.
func startWork(t *testing.T, q *litequeue.Queue, opts litequeue.WorkerOptions) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, opts) }()
	return func() error {
		cancel()
		return <-done
	}
}

// fixedPolicy waits exactly 10s before every retry, 3 tries.
var fixedPolicy = litequeue.Policy{Backoff: litequeue.Constant, Base: 10 * time.Second, Ceiling: time.Minute, MaxTries: 3, Jitter: litequeue.NoJitter}

func workerName(t *testing.T, q *litequeue.Queue, id int64) string {
	t.Helper()
	h := history(t, q, id)
	if len(h) == 0 || h[0].Worker == "" {
		t.Fatalf("job %d: no worker name in history", id)
	}
	return h[0].Worker
}

// leaseUntil reads a running job's lease expiry.
func leaseUntil(tb testing.TB, q *litequeue.Queue, id int64) time.Time {
	tb.Helper()
	var ms int64
	if err := q.DB().Get(&ms, q.DB().Rebind(`SELECT lease_until FROM litequeue_jobs WHERE id = ?`), id); err != nil {
		tb.Fatal(err)
	}
	return time.UnixMilli(ms)
}

// output is what a process or a Queue's logger writes, safe to read
// while it is being written.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// completeInAppTx completes job in a transaction of the app's own
// (CompleteTx), committed, as a handler does that stores its result with
// the job's completion.
func completeInAppTx(ctx context.Context, q *litequeue.Queue, job *litequeue.Job) error {
	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := q.CompleteTx(ctx, tx, job); err != nil {
		return err
	}
	return tx.Commit()
}
