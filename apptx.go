package litequeue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// The app's own work in the queue's file: the pool DB() returns, and
// WriteTx, which runs the app's write transactions in turn with
// litequeue's own writes.

// appIdleConns is how many of the app's connections stay open between
// uses.
const appIdleConns = 4

// openAppDB opens the pool that DB() returns, apart from the pool of
// litequeue's own reads, so that those never wait for a connection the app
// holds: a transaction waiting for SQLite's write lock holds its
// connection all the while. Like a pool of database/sql by default, it
// opens as many connections as the app uses at once, so that a goroutine
// holding a transaction never waits for another connection that
// transactions waiting behind it hold; the app may bound it with
// DB().SetMaxOpenConns.
func openAppDB(path, synchronous, checkpoint string) (*sqlx.DB, error) {
	db, err := openDB(path, writeAccess, synchronous, checkpoint, 0)
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(appIdleConns)
	return db, nil
}

// errNilWriteTx refuses WriteTx(ctx, nil).
var errNilWriteTx = errors.New("litequeue: WriteTx with a nil function: pass the function that makes the transaction's writes")

// appTxWait is how long a write waits for a WriteTx that holds the write
// lock before it fails: as long as SQLite's busy timeout lets a connection
// wait for another's write lock.
const appTxWait = busyTimeoutMS * time.Millisecond

// beginTries is how many times WriteTx begins its transaction while SQLite
// reports the file busy, each try waiting up to the busy timeout.
const beginTries = 3

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
	if q.readOnly() {
		return ErrReadOnly
	}
	if err := q.w.turn.take(ctx); err != nil {
		return fmt.Errorf("litequeue: write transaction: %w", err)
	}
	defer q.w.turn.give()
	if err := q.eng.lock(); err != nil {
		return fmt.Errorf("litequeue: write transaction: take write lock: %w", err)
	}
	defer q.eng.unlock()
	tx, err := q.beginApp(ctx)
	if err != nil {
		return fmt.Errorf("litequeue: write transaction: begin: %w", err)
	}
	defer tx.Rollback()
	q.w.turn.appBegan()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("litequeue: write transaction: commit: %w", err)
	}
	return nil
}

// beginApp begins a write transaction on the app's pool, trying again
// while the file is busy, up to beginTries times.
func (q *Queue) beginApp(ctx context.Context) (*sqlx.Tx, error) {
	for try := 1; ; try++ {
		tx, err := q.app.BeginTxx(ctx, nil) // IMMEDIATE: see dsn
		if err == nil || !q.eng.retry(err) || try == beginTries {
			return tx, err
		}
	}
}

// writeTurn orders, within one process, a Queue's writes that take the
// write lock: the writer's commits and the app's WriteTx. One write holds
// the turn at a time and the others wait in line (a channel serves its
// waiting senders in order); the holder then takes the file lock, which
// orders it with the writers of other processes. A write waits for a
// WriteTx that holds the turn for at most appTxWait (see take). The zero
// value is ready to use.
type writeTurn struct {
	once sync.Once
	ch   chan struct{} // holds a value while the turn is taken

	mu      sync.Mutex
	appFrom time.Time // when the WriteTx holding the turn began; zero if none
}

func (t *writeTurn) c() chan struct{} {
	t.once.Do(func() { t.ch = make(chan struct{}, 1) })
	return t.ch
}

// take waits for the turn until ctx is done, or until a WriteTx has held
// it for appTxWait: a WriteTx whose fn makes a write that takes no
// transaction waits for itself, and this turns the hang into an error.
// The wait is on real time, not the injected clock: it waits for another
// goroutine.
func (t *writeTurn) take(ctx context.Context) error {
	select {
	case t.c() <- struct{}{}:
		return nil
	default:
	}
	wait := time.NewTimer(appTxWait)
	defer wait.Stop()
	for {
		select {
		case t.c() <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-wait.C:
			held := t.appHeld()
			if held >= appTxWait {
				return fmt.Errorf("a WriteTx has held the write lock for %v, past the %v a write waits for one "+
					"(does its fn make a write that takes no transaction, such as Enqueue, or begin another WriteTx?)",
					held.Round(time.Millisecond), appTxWait)
			}
			wait.Reset(appTxWait - held)
		}
	}
}

// appBegan records that the turn's holder is a WriteTx whose transaction
// has just begun.
func (t *writeTurn) appBegan() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.appFrom = time.Now()
}

// appHeld returns how long the WriteTx holding the turn has held it since
// it began its transaction; 0 if no WriteTx holds it.
func (t *writeTurn) appHeld() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.appFrom.IsZero() {
		return 0
	}
	return time.Since(t.appFrom)
}

// give hands the turn to the next write in line.
func (t *writeTurn) give() {
	t.mu.Lock()
	t.appFrom = time.Time{}
	t.mu.Unlock()
	<-t.c()
}

// appTx is the app's transaction tx, for litequeue's SQL.
func (q *Queue) appTx(t *sqlx.Tx) *dbTx { return &dbTx{t, q.dialect} }
