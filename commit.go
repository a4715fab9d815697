package litequeue

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// writer runs every write litequeue makes, on one connection, and commits
// the writes that arrive together in one transaction: group commit. Many
// goroutines enqueueing or finishing jobs at once share one BEGIN IMMEDIATE
// and one fsync, and each caller still returns only after the commit that
// holds its write is durable.
//
// There is no goroutine of its own: the first caller to find the writer idle
// becomes the leader and commits what has queued up (its own write among
// it); when it is done it hands leadership to the first caller that queued
// meanwhile. A batch runs first as plain statements; if one write fails,
// the batch is rolled back and run again with each write inside a
// savepoint, so that the failed one is rolled back alone and reports its
// own error while the others commit. Savepoints cost three statements a
// write, and writes rarely fail, so the common path goes without them.
//
// The writer begins and ends transactions itself, with plain statements on
// its connection, so that the statements it prepares once are reused by
// every transaction (database/sql would prepare them anew in each).
type writer struct {
	conn *stmtConn // the one connection, used by the leader only
	turn writeTurn // orders the commits with the app's WriteTx in the process
	eng  engine    // begins the transactions, and orders writers across processes
	// perBatch, if set, runs once per batch that has writes joined to it,
	// after the batch's writes and in their transaction, with the joins of
	// those writes in order (see writeOp.join): work that the writes of a
	// batch share, as the workers finishing together share one claim of
	// their next jobs.
	perBatch func(ctx context.Context, tx execer, joins []any) error
	// wake wakes the Queue's idle Work loops, after a commit in which a
	// write asked for it (wakeAtCommit).
	wake  func()
	wakes bool // a write of the transaction that runs asked

	mu      sync.Mutex
	queue   []*writeOp
	leading bool
}

type writeOp struct {
	ctx context.Context
	fn  func(tx execer) error // nil: the op is its join alone
	// join, if not nil, is passed to the writer's perBatch with the joins
	// of the other writes in the batch.
	join any
	// light marks a write whose loss in a power cut is harmless, so that a
	// batch of only such writes commits without an fsync (see durable).
	light bool
	err   error
	done  chan bool // receives true to lead, false when committed or failed
}

// maxBatch bounds how many writes share one transaction, so that one
// commit never holds the write lock for long.
const maxBatch = 512

// do runs fn in a write transaction, possibly shared with other callers'
// writes, and returns once that transaction committed (nil) or fn's write
// was rolled back (fn's error, or the transaction's). fn must do nothing
// but its SQL: it may run on another caller's goroutine, and more than
// once (when another write in its batch fails), so it sets its results
// afresh each time.
//
// A non-nil op.join is passed to perBatch in the same transaction, after
// fn, together with the joins of the other writes in the batch.
//
// A write that failed because the server went away (see engine.lost) runs
// again after a wait (see outage), for up to ServerRetry within op.ctx,
// and then fails with ErrServerGone. A write whose COMMIT was cut off is
// never run again before the server, once back, has said that the COMMIT
// did not take effect (see commitLost); one that it cannot tell of fails
// with ErrCommitUnknown too.
func (w *writer) do(op *writeOp) error {
	var o outage
	w.once(op)
	for w.eng.lost(op.err) {
		if !o.wait(op.ctx) {
			return o.gone(op.ctx, op.err)
		}
		var cl *commitLost
		if !errors.As(op.err, &cl) {
			w.once(op) // its transaction rolled back whole
			continue
		}
		status, err := cl.outcome(op.ctx)
		switch {
		case err != nil && w.eng.lost(err), err == nil && status == "in progress":
			// asked again after the next wait
		case err == nil && status == "committed":
			op.err = nil
		case err == nil && status == "aborted":
			w.once(op)
		default:
			return &goneError{err: op.err, commit: true}
		}
	}
	return op.err
}

// once runs op in a batch, once, and sets op.err.
func (w *writer) once(op *writeOp) {
	op.done = make(chan bool, 1)
	w.mu.Lock()
	w.queue = append(w.queue, op)
	if w.leading {
		w.mu.Unlock()
		if lead := <-op.done; !lead {
			return
		}
	} else {
		w.leading = true
		w.mu.Unlock()
	}
	w.lead(op)
}

// lead commits one batch that includes op, then passes the lead on.
func (w *writer) lead(op *writeOp) {
	// The callers woken by the last commit are about to queue their next
	// writes: let them, so that they share this commit.
	runtime.Gosched()
	w.mu.Lock()
	n := min(len(w.queue), maxBatch)
	batch := w.queue[:n:n]
	w.queue = w.queue[n:]
	w.mu.Unlock()

	w.commit(batch)
	for _, o := range batch {
		if o != op {
			o.done <- false
		}
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) == 0 {
		w.leading = false
		w.queue = nil
		return
	}
	w.queue[0].done <- true
}

// commit runs the batch in one transaction and sets each op's err.
func (w *writer) commit(batch []*writeOp) {
	if err := w.turn.take(context.Background()); err != nil {
		for _, o := range batch {
			o.err = err
		}
		return
	}
	defer w.turn.give()
	if err := w.eng.lock(); err != nil {
		for _, o := range batch {
			o.err = fmt.Errorf("take write lock: %w", err)
		}
		return
	}
	defer w.eng.unlock()
	for try := 1; ; try++ {
		if !w.run(batch, false) {
			w.run(batch, true)
		}
		again, lost := w.failed(batch)
		if lost {
			if err := w.conn.renew(); err != nil {
				return
			}
		}
		if len(again) == 0 || try == writeTries {
			return
		}
		batch = again
	}
}

// writeTries bounds how many times a write that the database rolled back
// whole (a deadlock, a lost connection) runs.
const writeTries = 3

// errCommit marks a failed COMMIT: whether it took effect is unknown when
// the connection was lost, so the writes are not run again, unless the
// server tells that it did not (see commitLost).
var errCommit = errors.New("commit")

// A commitLost is errCommit for a COMMIT whose connection was lost, of a
// transaction that wrote: the server, once back, tells whether it took
// effect. Every write of the batch holds the same one, which asks once
// for all of them (at a restart, a question each could take more
// connections than the server has).
type commitLost struct {
	err error
	// ask asks the server for the status of the transaction:
	// "committed", "aborted", "in progress", or "" if it no longer knows.
	ask func(ctx context.Context) (string, error)

	mu     sync.Mutex
	status string // the answer, once it is "committed" or "aborted"
}

func (e *commitLost) Error() string        { return "commit: " + e.err.Error() }
func (e *commitLost) Unwrap() error        { return e.err }
func (e *commitLost) Is(target error) bool { return target == errCommit }

// outcome returns the status of the transaction, asking the server until
// it has a final one.
func (e *commitLost) outcome(ctx context.Context) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.status != "" {
		return e.status, nil
	}
	status, err := e.ask(ctx)
	if status == "committed" || status == "aborted" {
		e.status = status
	}
	return status, err
}

// failed returns the writes of the batch that failed in a way that lets
// them run again, and reports whether one failed because the connection
// was lost.
func (w *writer) failed(batch []*writeOp) (again []*writeOp, lost bool) {
	for _, o := range batch {
		if o.err == nil {
			continue
		}
		lost = lost || w.eng.lost(o.err)
		if w.eng.retry(o.err) && !errors.Is(o.err, errCommit) && o.ctx.Err() == nil {
			again = append(again, o)
		}
	}
	return again, lost
}

// run runs the batch in one transaction, each write in a savepoint if
// isolate is set. It reports false when a write of a batch of several
// failed without isolation: the transaction was rolled back, and the batch
// must run again isolated.
func (w *writer) run(batch []*writeOp, isolate bool) bool {
	fail := func(err error) bool {
		for _, o := range batch {
			if o.err == nil {
				o.err = err
			}
		}
		return true
	}
	for _, o := range batch {
		o.err = nil
	}
	w.wakes = false
	c := w.conn
	if err := w.eng.begin(c, durable(batch)); err != nil {
		return fail(err)
	}
	for _, op := range batch {
		if isolate {
			if err := w.runInSavepoint(op); err != nil {
				c.rollback() // the transaction is unusable
				return fail(err)
			}
		} else if op.run(c) != nil {
			c.rollback()
			return len(batch) == 1 // a lone write's failure is its own
		}
	}
	if !isolate {
		if err := w.joined(batch); err != nil {
			c.rollback()
			if len(batch) == 1 {
				return fail(err)
			}
			return false
		}
	}
	if err := w.eng.commit(c); err != nil {
		c.rollback()
		return fail(err)
	}
	if w.wakes {
		w.wake()
	}
	return true
}

// wakeAtCommit asks that the Queue's idle Work loops wake once the
// transaction that runs commits: for a write that makes jobs claimable
// which were not (see Queue.wakeIdle). Only a write the writer runs
// calls it, on the leader's goroutine.
func (w *writer) wakeAtCommit() { w.wakes = true }

// durable reports whether the batch's commit must survive a power cut,
// that is, whether any write in it is not light. Claims and lease renewals
// are light: a lost claim leaves its job pending (as if never claimed; a
// handler that started runs again, as after any crash), a lost renewal
// only an earlier expiry, and the holder's later writes are fenced by the
// token, not the expiry. The next durable commit makes them durable too:
// an fsync of the WAL covers every frame before it.
func durable(batch []*writeOp) bool {
	for _, op := range batch {
		if !op.light {
			return true
		}
	}
	return false
}

// joined runs perBatch for the batch's joins, all at once, turning a
// panic (perBatch may call the app's Options.Rand) into an error, as run
// does for a write: the leader must never unwind with the writer held.
func (w *writer) joined(batch []*writeOp) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("litequeue: write panicked: %v\n%s", r, debug.Stack())
		}
	}()
	var joins []any
	var ctx context.Context
	for _, op := range batch {
		if op.join != nil {
			joins = append(joins, op.join)
			ctx = op.ctx
		}
	}
	if len(joins) == 0 {
		return nil
	}
	return w.perBatch(ctx, w.conn, joins)
}

// runInSavepoint runs op, and perBatch for its join, inside a savepoint,
// rolling back to it if either fails, and then forgetting a wake that op
// asked for (wakeAtCommit). op's own failure is kept in op.err;
// the returned error is a failure of the savepoint itself, which dooms the
// whole transaction.
func (w *writer) runInSavepoint(op *writeOp) error {
	c := w.conn
	if err := c.exec(`SAVEPOINT litequeue_op`); err != nil {
		return err
	}
	wakes := w.wakes
	if op.run(c) == nil {
		op.err = w.joined([]*writeOp{op})
	}
	if op.err != nil {
		if err := c.exec(`ROLLBACK TO litequeue_op`); err != nil {
			return err
		}
		w.wakes = wakes // the wake it asked for goes with its writes
	}
	return c.exec(`RELEASE litequeue_op`)
}

// run calls op.fn, turning a panic into an error so that one bad write
// cannot take down the leader that runs it for another goroutine.
func (op *writeOp) run(tx execer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("litequeue: write panicked: %v\n%s", r, debug.Stack())
		}
		op.err = err
	}()
	if err := op.ctx.Err(); err != nil {
		return err
	}
	if op.fn == nil {
		return nil
	}
	return op.fn(tx)
}

// ServerRetry is how long a call of a [Queue] on a PostgreSQL server that
// found the server away is tried again, from its first failure, before it
// fails with [ErrServerGone]: long enough for a restart or a failover. The
// waits between tries grow from 50ms to 1s, on the real clock whatever
// [Options.Clock] is.
const ServerRetry = 10 * time.Second

// The waits of an outage: the first, and the longest.
const (
	outageFirstWait = 50 * time.Millisecond
	outageMaxWait   = time.Second
)

// An outage paces the tries of one call while the server is away: its
// waits double from outageFirstWait up to outageMaxWait, for ServerRetry
// in all from the first failure. The zero value is an outage that has not
// begun.
type outage struct {
	since time.Time     // the first failure, on the real clock
	next  time.Duration // the next wait
}

// wait waits before the next try of a call that found the server away,
// and reports true; or false, once the call has tried for ServerRetry or
// ctx is done.
func (o *outage) wait(ctx context.Context) bool {
	now := time.Now()
	if o.since.IsZero() {
		o.since, o.next = now, outageFirstWait
	}
	left := ServerRetry - now.Sub(o.since)
	if left <= 0 || ctx.Err() != nil {
		return false
	}
	t := time.NewTimer(min(o.next, left))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	}
	o.next = min(2*o.next, outageMaxWait)
	return true
}

// gone is the error of a call whose last try failed with err, the server
// being away, and that tried no more (see wait).
func (o *outage) gone(ctx context.Context, err error) error {
	return &goneError{err: err, ctx: ctx.Err(), tried: time.Since(o.since), commit: errors.Is(err, errCommit)}
}
