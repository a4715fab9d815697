package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// A Writer runs every write litequeue makes, on one connection, and commits
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
type Writer[N any] struct {
	Conn   *Conn  // the one connection, used by the leader only
	Turn   Turn   // orders the commits with the app's WriteTx in the process
	Engine Engine // begins the transactions, and orders writers across processes
	// Steps are the machinery's steps of the settle of a batch's run
	// ends (see settle.go); needed only by a writer that is given ends.
	Steps Steps[N]
	// Shard is the writer's rows of litequeue_throughput, which the
	// settle adds the ends it stores to (see ShardFor).
	Shard int
	// Wake wakes the Queue's idle Work loops, after a commit in which a
	// write asked for it (WakeAtCommit).
	Wake  func()
	wakes bool // a write of the transaction that runs asked

	mu      sync.Mutex
	queue   []*Op[N]
	leading bool
}

// An Op is one write for the Writer to run.
type Op[N any] struct {
	Ctx context.Context
	Fn  func(tx Execer) error // nil: the op is its End alone
	// End, if not nil, is the end of a run, which the writer settles in
	// the same transaction, after Fn, with the ends of the other writes
	// of the batch (see settle.go); it sets End.Stored.
	End *RunEnd[N]
	// Light marks a write whose loss in a power cut is harmless, so that a
	// batch of only such writes commits without an fsync (see durable).
	Light bool
	// Cancelled is set by the writer, on one op of a batch that commits,
	// to the rows of the jobs that the batch cancelled because a
	// dependency failed (see Resolve), for its caller to tell of them.
	Cancelled []JobRow
	err       error
	done      chan bool // receives true to lead, false when committed or failed
}

// maxBatch bounds how many writes share one transaction, so that one
// commit never holds the write lock for long.
const maxBatch = 512

// Do runs op.Fn in a write transaction, possibly shared with other callers'
// writes, and returns once that transaction committed (nil) or fn's write
// was rolled back (fn's error, or the transaction's). fn must do nothing
// but its SQL: it may run on another caller's goroutine, and more than
// once (when another write in its batch fails), so it sets its results
// afresh each time.
//
// A non-nil op.End is settled in the same transaction, after fn,
// together with the ends of the other writes in the batch.
//
// A write that failed because the server went away (see Engine.Lost) runs
// again after a wait (see outage), for up to ServerRetry within op.Ctx,
// and then fails with ErrServerGone. A write whose COMMIT was cut off is
// never run again before the server, once back, has said that the COMMIT
// did not take effect (see CommitLost); one that it cannot tell of fails
// with ErrCommitUnknown too.
func (w *Writer[N]) Do(op *Op[N]) error {
	var o outage
	w.once(op)
	for w.Engine.Lost(op.err) {
		if !o.wait(op.Ctx) {
			return o.gone(op.Ctx, op.err)
		}
		var cl *CommitLost
		if !errors.As(op.err, &cl) {
			w.once(op) // its transaction rolled back whole
			continue
		}
		status, err := cl.outcome(op.Ctx)
		switch {
		case err != nil && w.Engine.Lost(err), err == nil && status == "in progress":
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
func (w *Writer[N]) once(op *Op[N]) {
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
func (w *Writer[N]) lead(op *Op[N]) {
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
func (w *Writer[N]) commit(batch []*Op[N]) {
	if err := w.Turn.Take(context.Background()); err != nil {
		for _, o := range batch {
			o.err = err
		}
		return
	}
	defer w.Turn.Give()
	if err := w.Engine.Lock(); err != nil {
		for _, o := range batch {
			o.err = fmt.Errorf("take write lock: %w", err)
		}
		return
	}
	defer w.Engine.Unlock()
	for try := 1; ; try++ {
		if !w.run(batch, false) {
			w.run(batch, true)
		}
		again, lost := w.failed(batch)
		if lost {
			if err := w.Conn.Renew(); err != nil {
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

// failed returns the writes of the batch that failed in a way that lets
// them run again, and reports whether one failed because the connection
// was lost.
func (w *Writer[N]) failed(batch []*Op[N]) (again []*Op[N], lost bool) {
	for _, o := range batch {
		if o.err == nil {
			continue
		}
		lost = lost || w.Engine.Lost(o.err)
		if w.Engine.Retry(o.err) && !errors.Is(o.err, ErrCommit) && o.Ctx.Err() == nil {
			again = append(again, o)
		}
	}
	return again, lost
}

// run runs the batch in one transaction, each write in a savepoint if
// isolate is set. It reports false when a write of a batch of several
// failed without isolation: the transaction was rolled back, and the batch
// must run again isolated.
func (w *Writer[N]) run(batch []*Op[N], isolate bool) bool {
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
	c := w.Conn
	c.resolved = resolvedNote{}
	if err := w.Engine.Begin(c, durable(batch)); err != nil {
		return fail(err)
	}
	c.gather(!isolate)
	defer c.gather(false)
	for _, op := range batch {
		if isolate {
			if err := w.runInSavepoint(op); err != nil {
				c.Rollback() // the transaction is unusable
				return fail(err)
			}
		} else if op.run(c) != nil {
			c.Rollback()
			return len(batch) == 1 // a lone write's failure is its own
		}
	}
	if !isolate {
		if err := w.settled(batch); err != nil {
			c.Rollback()
			if len(batch) == 1 {
				return fail(err)
			}
			return false
		}
	}
	if err := w.commitTx(c); err != nil {
		c.Rollback()
		return fail(err)
	}
	w.committed(batch)
	return true
}

// committed does what follows the commit of batch: it wakes the Queue's
// idle loops if a write asked for it, and gives one of the batch's ops
// the jobs the batch cancelled because a dependency failed, for its
// caller to tell of them (Op.Cancelled).
func (w *Writer[N]) committed(batch []*Op[N]) {
	if w.wakes {
		w.Wake()
	}
	if cancelled := w.Conn.resolved.cancelled; len(cancelled) > 0 {
		batch[0].Cancelled = cancelled
	}
}

// commitTx writes the changes to the kept counts that the batch's
// operations gathered on c, asks for the wake of this process's idle
// loops if the batch made a waiting job pending, counts in the
// throughput the jobs it cancelled for a failed dependency, and commits
// the transaction.
func (w *Writer[N]) commitTx(c *Conn) error {
	if err := c.flushGathered(); err != nil {
		return err
	}
	if c.resolved.released {
		w.WakeOwn()
	}
	if err := CountEnds(context.Background(), c, w.Shard, c.resolved.history); err != nil {
		return err
	}
	return w.Engine.Commit(c)
}

// WakeAtCommit asks that the Queue's idle Work loops wake once the
// transaction that runs commits: for a write that makes jobs claimable
// which were not (see WakeIdle). Only a write the writer runs
// calls it, on the leader's goroutine.
func (w *Writer[N]) WakeAtCommit() { w.wakes = true }

// WakeOwn asks that this process's idle Work loops wake at the commit of
// the transaction that runs, for a write that made a job claimable (a run
// released at a shutdown, a retry), unless the engine's watch tells them
// of the commit anyway. Only a write the writer runs calls it, on the
// leader's goroutine.
func (w *Writer[N]) WakeOwn() {
	if !w.Engine.TellsOwn() {
		w.wakes = true
	}
}

// WakeIdle wakes, at the commit of tx, the idle Work loops of every
// process on the database, this one's among them, for a write that opened
// a shut kind or queue, or moved when one opens: a resume, a run's end
// under MaxRunning, a breaker's probe ending or a reset. A write the
// writer runs calls it, on the leader's goroutine.
func (w *Writer[N]) WakeIdle(ctx context.Context, tx Execer) error {
	w.WakeOwn()
	return w.Engine.NotifyAtCommit(ctx, tx)
}

// durable reports whether the batch's commit must survive a power cut,
// that is, whether any write in it is not light. Claims and lease renewals
// are light: a lost claim leaves its job pending (as if never claimed; a
// handler that started runs again, as after any crash), a lost renewal
// only an earlier expiry, and the holder's later writes are fenced by the
// token, not the expiry. The next durable commit makes them durable too:
// an fsync of the WAL covers every frame before it.
func durable[N any](batch []*Op[N]) bool {
	for _, op := range batch {
		if !op.Light {
			return true
		}
	}
	return false
}

// settled settles the ends of the batch's writes, all at once (see
// settle), turning a panic (a step may call the app's Options.Rand) into
// an error, as run does for a write: the leader must never unwind with
// the writer held.
func (w *Writer[N]) settled(batch []*Op[N]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("litequeue: write panicked: %v\n%s", r, debug.Stack())
		}
	}()
	var ends []*RunEnd[N]
	var ctx context.Context
	for _, op := range batch {
		if op.End != nil {
			ends = append(ends, op.End)
			ctx = op.Ctx
		}
	}
	if len(ends) == 0 {
		return nil
	}
	return w.settle(ctx, w.Conn, ends)
}

// runInSavepoint runs op, and the settle of its end, inside a savepoint,
// rolling back to it if either fails, and then forgetting a wake that op
// asked for (WakeAtCommit). op's own failure is kept in op.err;
// the returned error is a failure of the savepoint itself, which dooms the
// whole transaction.
func (w *Writer[N]) runInSavepoint(op *Op[N]) error {
	c := w.Conn
	if err := c.Exec(`SAVEPOINT litequeue_op`); err != nil {
		return err
	}
	wakes := w.wakes
	if op.run(c) == nil {
		op.err = w.settled([]*Op[N]{op})
	}
	if op.err != nil {
		if err := c.Exec(`ROLLBACK TO litequeue_op`); err != nil {
			return err
		}
		w.wakes = wakes // the wake it asked for goes with its writes
	}
	return c.Exec(`RELEASE litequeue_op`)
}

// run calls op.Fn, turning a panic into an error so that one bad write
// cannot take down the leader that runs it for another goroutine.
func (op *Op[N]) run(tx Execer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("litequeue: write panicked: %v\n%s", r, debug.Stack())
		}
		op.err = err
	}()
	if err := op.Ctx.Err(); err != nil {
		return err
	}
	if op.Fn == nil {
		return nil
	}
	return op.Fn(tx)
}
