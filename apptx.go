package litequeue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// The app's own work in the queue's file: the pool DB() returns, and
// WriteTx, which runs the app's write transactions in turn with
// litequeue's own writes.

// errNilWriteTx refuses WriteTx(ctx, nil).
var errNilWriteTx = errors.New("litequeue: WriteTx with a nil function: pass the function that makes the transaction's writes")

// WriteTx runs fn in a write transaction on [Queue.DB]() and commits it if
// fn returns nil. If fn returns an error, WriteTx rolls back and returns
// that error unchanged; if fn panics, it rolls back and panics on. fn must
// not commit or roll back tx itself. WriteTx returns [ErrClosed] after
// [Queue.Close], [ErrReadOnly] on a [Queue] from [OpenReadOnly], and an
// error for a nil fn, beginning nothing.
//
// The transaction takes its turn among litequeue's writes — this Queue's,
// other Queues' on the same file, other processes' — the way they take
// theirs: it waits in line on litequeue's write lock (in the process, then
// on the <db>-lock file) and only then begins (IMMEDIATE), so it never
// fails with SQLITE_BUSY because of them, however many write at once. A
// transaction begun on DB() directly waits in SQLite's busy handler
// instead, which polls, and under load may fail after the busy timeout. A
// BEGIN that finds the file busy all the same (a writer that takes no
// lock: such a transaction, another program) is tried again, up to 3
// times in all. While in line in this process WriteTx gives up when ctx is
// done; once first in line, it waits for another process's write to end.
//
// Pass tx to [Queue.SeenTx], [Queue.EnqueueTx], [Queue.MarkTx] and
// [Queue.CompleteTx]: a handler that checks a key, makes its own write,
// marks the key and completes its job in one WriteTx does so exactly once
// (see the package doc, Idempotency).
//
// While fn runs no other write to the file commits, litequeue's included
// (enqueues, completions, the lease renewals of running jobs): keep fn
// short. So fn must not call, directly or through a goroutine it waits for,
// a write that takes no tx — [Queue.Enqueue], [Queue.EnqueueMany],
// [Queue.Mark], [Queue.Cancel], [Queue.Replay], [Queue.ReplayDead],
// [Queue.RunDue], another WriteTx — of this Queue or of another on the
// file, nor begin a transaction on DB(), nor call Close: each waits for fn
// to end. So that such a mistake ends in an error rather than a hang, a
// write of this Queue waiting for a WriteTx whose transaction has been open
// for 10s fails with an error that says so (as a write waiting for a
// transaction on DB() fails with SQLITE_BUSY after the busy timeout); Close
// waits for WriteTx to return. Reads ([Queue.Get], [Queue.Seen],
// [Queue.List], [Queue.Stats]…) and the …Tx calls may be made from fn.
func (q *Queue) WriteTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	if fn == nil {
		return errNilWriteTx
	}
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if q.st.readOnly() {
		return ErrReadOnly
	}
	var failed bool // fn's own error is returned unchanged
	err = q.st.w.AppTx(ctx, q.st.info.App, func(tx *sqlx.Tx) error {
		err := fn(tx)
		failed = err != nil
		return err
	})
	if err != nil && !failed {
		return fmt.Errorf("litequeue: write transaction: %w", err)
	}
	return err
}
