package litequeue

import (
	"context"
	"database/sql"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/jmoiron/sqlx"
)

var errNoRows = sql.ErrNoRows

// writer runs every write litequeue makes, on one connection, and commits
// the writes that arrive together in one transaction: group commit. Many
// goroutines enqueueing or finishing jobs at once share one BEGIN IMMEDIATE
// and one fsync, and each caller still returns only after the commit that
// holds its write is durable.
//
// There is no goroutine of its own: the first caller to find the writer idle
// becomes the leader and commits what has queued up (its own write among
// it); when it is done it hands leadership to the first caller that queued
// meanwhile. Each write runs inside a savepoint, so one that fails is rolled
// back alone and reports its own error, while the others commit.
type writer struct {
	db   *sqlx.DB  // one connection; transactions begin IMMEDIATE
	lock *fileLock // orders writers across processes

	mu      sync.Mutex
	queue   []*writeOp
	leading bool
}

type writeOp struct {
	ctx  context.Context
	fn   func(tx *sqlx.Tx) error
	err  error
	done chan bool // receives true to lead, false when committed or failed
}

// maxBatch bounds how many writes share one transaction, so that one
// commit never holds the write lock for long.
const maxBatch = 512

// do runs fn in a write transaction, possibly shared with other callers'
// writes, and returns once that transaction committed (nil) or fn's write
// was rolled back (fn's error, or the transaction's). fn must do nothing
// but its SQL: it may run on another caller's goroutine.
func (w *writer) do(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	op := &writeOp{ctx: ctx, fn: fn, done: make(chan bool, 1)}
	w.mu.Lock()
	w.queue = append(w.queue, op)
	if w.leading {
		w.mu.Unlock()
		if lead := <-op.done; !lead {
			return op.err
		}
	} else {
		w.leading = true
		w.mu.Unlock()
	}
	w.lead(op)
	return op.err
}

// lead commits one batch that includes op, then passes the lead on.
func (w *writer) lead(op *writeOp) {
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
	fail := func(err error) {
		for _, o := range batch {
			if o.err == nil {
				o.err = err
			}
		}
	}
	if err := w.lock.lock(); err != nil {
		fail(fmt.Errorf("take write lock: %w", err))
		return
	}
	defer w.lock.unlock()
	tx, err := w.db.BeginTxx(context.Background(), nil)
	if err != nil {
		fail(fmt.Errorf("begin: %w", err))
		return
	}
	if len(batch) == 1 {
		op := batch[0]
		if op.err = op.run(tx); op.err != nil {
			tx.Rollback()
			return
		}
	} else {
		for _, op := range batch {
			if err := op.runInSavepoint(tx); err != nil {
				fail(err) // the transaction is unusable
				tx.Rollback()
				return
			}
		}
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("commit: %w", err))
	}
}

// runInSavepoint runs op inside a savepoint, rolling back to it if op fails.
// Its error is op's own failure is kept in op.err; the returned error is a
// failure of the savepoint itself, which dooms the whole transaction.
func (op *writeOp) runInSavepoint(tx *sqlx.Tx) error {
	if _, err := tx.Exec(`SAVEPOINT litequeue_op`); err != nil {
		return err
	}
	if op.err = op.run(tx); op.err != nil {
		if _, err := tx.Exec(`ROLLBACK TO litequeue_op`); err != nil {
			return err
		}
	}
	_, err := tx.Exec(`RELEASE litequeue_op`)
	return err
}

// run calls op.fn, turning a panic into an error so that one bad write
// cannot take down the leader that runs it for another goroutine.
func (op *writeOp) run(tx *sqlx.Tx) (err error) {
	if err := op.ctx.Err(); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("litequeue: write panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return op.fn(tx)
}
