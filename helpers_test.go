package litequeue_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
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
	j, err := q.Enqueue(context.Background(), kind, payload, opts...)
	if err != nil {
		tb.Fatalf("Enqueue(%q): %v", kind, err)
	}
	return j
}

// get reads a job and fails the test on error.
func get(tb testing.TB, q *litequeue.Queue, id int64) *litequeue.Job {
	tb.Helper()
	j, err := q.Get(context.Background(), id)
	if err != nil {
		tb.Fatalf("Get(%d): %v", id, err)
	}
	return j
}

// history reads a job's history and fails the test on error.
func history(tb testing.TB, q *litequeue.Queue, id int64) []litequeue.Attempt {
	tb.Helper()
	h, err := q.History(context.Background(), id)
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
	n, err := q.RunDue(context.Background())
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

// stepUntilClosed steps the mock clock by step until ch is closed, failing
// the test after a real-time deadline: for a wait that the clock ends, such
// as Work's shutdown grace, stepped no further than it takes.
func stepUntilClosed(tb testing.TB, clk *clock.Mock, what string, ch <-chan struct{}, step time.Duration) {
	tb.Helper()
	waitFor(tb, what, func() bool {
		select {
		case <-ch:
			return true
		default:
			clk.Add(step)
			return false
		}
	})
}

// waitWithin is waitFor with a deadline of d, for long runs of work.
func waitWithin(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
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
	_, err := q.Get(context.Background(), id)
	if errors.Is(err, litequeue.ErrNotFound) {
		return false
	}
	if err != nil {
		tb.Fatal(err)
	}
	return true
}

// seen calls Seen and fails the test on error.
func seen(tb testing.TB, q *litequeue.Queue, key string) bool {
	tb.Helper()
	ok, err := q.Seen(context.Background(), key)
	if err != nil {
		tb.Fatalf("Seen(%q): %v", key, err)
	}
	return ok
}

// mark calls Mark and fails the test on error.
func mark(tb testing.TB, q *litequeue.Queue, key string, ttl time.Duration) {
	tb.Helper()
	if err := q.Mark(context.Background(), key, ttl); err != nil {
		tb.Fatalf("Mark(%q, %v): %v", key, ttl, err)
	}
}

// cancelledOnce fails the test unless the job is cancelled and its history
// holds one run, recorded cancelled.
func cancelledOnce(tb testing.TB, q *litequeue.Queue, id int64) {
	tb.Helper()
	if got := get(tb, q, id); got.State != litequeue.Cancelled {
		tb.Fatalf("state = %s, want cancelled", got.State)
	}
	if h := history(tb, q, id); len(h) != 1 || h[0].Outcome != litequeue.OutcomeCancelled {
		tb.Fatalf("history = %+v, want one cancelled run", h)
	}
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

// health returns q's Health, failing the test on error.
func health(tb testing.TB, q *litequeue.Queue) *litequeue.Health {
	tb.Helper()
	h, err := q.Health(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
