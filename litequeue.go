package litequeue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/jmoiron/sqlx"
)

// Queue is a job queue kept in one SQLite file. It is safe for concurrent
// use by many goroutines, and several Queues — in one process or several —
// may work on the same file. After [Queue.Close] every method returns
// [ErrClosed].
type Queue struct {
	opts    Options // resolved: no zero fields
	clock   clock.Clock
	path    string
	db      *dbPool  // litequeue's own reads
	app     *sqlx.DB // the app's pool, returned by DB(): see openAppDB
	wdb     *sqlx.DB // the writer's pool of one connection
	w       writer   // every write litequeue makes
	eng     engine   // what is the file's own: see sqliteEngine
	dialect *dialect // nil: SQLite's (see dialect.go)
	worker  string   // default worker name: host:pid
	jobs    string   // the columns a jobRow scans from this file: see fileJobColumns
	flow    bool     // the database has flow control's tables: see flowTables

	// skew, on a server, checks the clock against the server's (skew.go).
	skew *clockCheck

	randMu  sync.Mutex
	eventMu sync.Mutex

	heldMu sync.Mutex
	held   map[int64]*lease // by job ID, each lease this Queue's runs hold

	mu       sync.RWMutex
	handlers map[string]*handler
	wake     chan struct{} // closed and replaced to wake idle workers
	closed   bool
	closing  chan struct{}  // closed by Close
	works    sync.WaitGroup // running Work calls
	calls    sync.WaitGroup // other public calls in progress

	middleware []func(Handler) Handler // of Use, under mu; only appended to

	periodic periodics // schedules registered with Periodic: see periodic.go

	// sleepHook, for tests only (see export_test.go), is told of each Work
	// loop that begins to wait with room for a job.
	sleepHook atomic.Pointer[func(queues []string, running int64)]
}

// readPoolSize bounds the connections of the pool that serves
// litequeue's own reads.
const readPoolSize = 4

// Open opens the queue in the SQLite file at path, creating the file (mode
// 0600) and litequeue's tables if they are missing, and switching the file
// to WAL. path is a file path, never a DSN: nothing in it can change a
// pragma. Open refuses, leaving the file as it was, a path that is not a
// regular file (a directory, a FIFO, a device: before anything reads it), a
// file that is not SQLite, another application's SQLite file, a schema
// newer than this binary, and a <path>-lock that it cannot open or that is
// a symbolic link, and a <path>-wal or <path>-shm that this process may
// not write (SQLite would open it read-only and fail every write); every
// refusal comes before the first write. The app may
// keep its own tables in the same file (see [Queue.DB]). Open starts no
// goroutine, and opening a file that this process already has open (a
// second [Queue], an [OpenReadOnly]) is safe: litequeue never opens and
// closes the database file with os, which on POSIX would drop SQLite's
// locks.
func Open(path string, opts Options) (*Queue, error) {
	q, err := open(path, opts, createMode)
	if err != nil {
		return nil, openError(path, err)
	}
	return q, nil
}

// openError is err, from opening the file at path, as "litequeue: open
// <path>: <problem>", naming the path once: an error of the os package
// names it already.
func openError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path && err.Error() == pe.Error() {
		err = pe.Err
	}
	return fmt.Errorf("litequeue: open %s: %w", path, err)
}

// OpenExisting is [Open] for a file that already holds litequeue's tables,
// for a tool that works beside the app that made the file (the litequeue
// command's writes): it refuses, leaving it byte for byte as it was, a
// missing file and any file without litequeue's tables — an empty file,
// the app's own SQLite file — which Open would create or adopt. A file of
// an older schema version is upgraded, as Open does.
func OpenExisting(path string, opts Options) (*Queue, error) {
	q, err := open(path, opts, existingMode)
	if err != nil {
		return nil, openError(path, err)
	}
	return q, nil
}

// OpenReadOnly opens an existing litequeue file for inspection —
// [Queue.Get], [Queue.List], [Queue.History], [Queue.Stats],
// [Queue.NextDue] — while other processes work on it. It never creates,
// migrates or writes the file: a missing file or one without litequeue's
// tables is an error, and every method that writes returns [ErrReadOnly].
// It also reads a file in a directory it cannot write (a read-only mount,
// say) that was closed cleanly, with no -wal file beside it: no writer can
// work there, so it reads the file as a snapshot. A process that may not
// write the file (mode 0400, another user's file) makes no -wal or -shm
// beside it, which the file's writers could not write later: with no -wal
// there, it reads the file as a snapshot too; a -wal without its -shm is
// refused.
func OpenReadOnly(path string, opts Options) (*Queue, error) {
	q, err := open(path, opts, readMode)
	if err != nil {
		return nil, openError(path, err)
	}
	return q, nil
}

func open(path string, opts Options, mode openMode) (_ *Queue, err error) {
	opts, err = opts.resolve()
	if err != nil {
		return nil, err
	}
	var closers []func() error // undone in reverse if Open fails
	defer func() {
		for i := len(closers) - 1; err != nil && i >= 0; i-- {
			closers[i]()
		}
	}()
	// The file is checked, and the write lock opened, before anything
	// writes to it; the read pool opens only once the file is in WAL.
	f, err := openFile(path, mode, opts.Synchronous, opts.Checkpoint)
	if err != nil {
		return nil, err
	}
	closers = append(closers, f.close)
	ctx := context.Background()
	first := f.db
	q := newQueue(path, opts)
	eng := &sqliteEngine{path: path, synchronous: opts.Synchronous, full: opts.Synchronous == "full",
		checkpoint: opts.Checkpoint, db: first, flock: f.lock, logger: opts.Logger}
	q.eng = eng
	q.jobs = fileJobColumns(f.version, mode)
	q.flow = mode != readMode || f.version >= 5
	if mode == readMode {
		first.SetMaxOpenConns(readPoolSize)
		first.SetMaxIdleConns(readPoolSize)
		q.db = &dbPool{DB: first}
		q.app = first // OpenReadOnly: the app reads on the queue's own pool
		return q, nil
	}
	q.wdb = first
	if err := migrate(ctx, q.wdb); err != nil {
		return nil, err
	}
	reads, err := openDB(path, writeAccess, opts.Synchronous, opts.Checkpoint, readPoolSize)
	if err != nil {
		return nil, err
	}
	closers = append(closers, reads.Close)
	q.db, eng.db = &dbPool{DB: reads}, reads
	if q.app, err = openAppDB(path, opts.Synchronous, opts.Checkpoint); err != nil {
		return nil, err
	}
	closers = append(closers, q.app.Close)
	if err := q.openWriter(ctx, eng); err != nil {
		return nil, err
	}
	return q, nil
}

// openWriter sets up the Queue's writer on a connection of q.wdb, whose
// transactions eng begins, in q's dialect.
func (q *Queue) openWriter(ctx context.Context, eng engine) error {
	conn, err := newStmtConn(ctx, q.wdb, q.dialect)
	if err != nil {
		return err
	}
	q.w.eng, q.w.conn, q.w.perBatch, q.w.wake = eng, conn, q.serve, q.notify
	return nil
}

// newQueue is a Queue on the file at path, with nothing open yet.
func newQueue(path string, opts Options) *Queue {
	host, _ := os.Hostname()
	return &Queue{
		opts:     opts,
		clock:    opts.Clock,
		path:     path,
		worker:   fmt.Sprintf("%s:%d", host, os.Getpid()),
		handlers: make(map[string]*handler),
		held:     make(map[int64]*lease),
		wake:     make(chan struct{}),
		closing:  make(chan struct{}),
	}
}

// Close stops every [Queue.Work] and RunDue call on the queue from claiming
// and shuts their runs down, then closes the file, and returns once nothing
// of the [Queue] runs. Each Work shuts down as if its context were done,
// with its [WorkerOptions.ShutdownGrace]; a RunDue, which has no options,
// with a grace of [DefaultShutdownGrace] on the injected clock (see
// [Queue.RunDue]). Past the grace the running handlers' contexts are
// cancelled, a job whose handler then returns is released without using a
// try, and a handler that does not return within a further min(grace, 5s)
// is abandoned: its job comes back through lease expiry. So Close called
// from a handler, which cannot wait for itself, returns after the grace and
// that further wait. Close is safe to call more than once; later calls
// return nil at once.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	close(q.closing)
	q.mu.Unlock()

	q.works.Wait()
	q.calls.Wait()
	if q.readOnly() {
		return errors.Join(q.db.stmts.close(), q.db.Close())
	}
	if q.onServer() { // one pool, the engine's to close
		return errors.Join(q.db.stmts.close(), q.w.conn.close(), q.eng.close())
	}
	return errors.Join(q.db.stmts.close(), q.w.conn.close(), q.wdb.Close(), q.db.Close(), q.app.Close(), q.eng.close())
}

// DB returns the app's connection pool, for its own tables and transactions
// in the queue's file. The pool is the app's alone: litequeue reads on a
// pool of its own and writes on a connection of its own, so nothing the
// [Queue] does waits for a connection the app holds. Like any database/sql
// pool it opens as many connections as the app uses at once, unless the app
// bounds it with SetMaxOpenConns. For a write transaction use
// [Queue.WriteTx], which waits its turn with litequeue's writes rather than
// in SQLite's busy handler. Transactions begun on DB with default options
// take SQLite's write lock at BEGIN (IMMEDIATE), so they too can be passed
// to [Queue.EnqueueTx], [Queue.SeenTx], [Queue.MarkTx] and
// [Queue.CompleteTx], but under load they may fail with SQLITE_BUSY; one
// held open blocks litequeue's own writes until it ends. A transaction
// begun ReadOnly, or a *sql.Rows left open, holds a read that keeps SQLite
// from emptying the WAL, which grows with every commit until the read ends.
// On a Queue from [OpenReadOnly], DB is the pool of the Queue's own reads,
// and only ReadOnly transactions can begin.
func (q *Queue) DB() *sqlx.DB { return q.app }

// enter admits one public call, returning ErrClosed after Close; Close
// waits for the admitted calls to leave before it closes the file. It
// refuses a nil ctx before anything touches a connection pool: database/sql
// would panic on it while holding the pool's lock, and every later call of
// the Queue would wait for that lock forever.
func (q *Queue) enter(ctx context.Context) (leave func(), err error) {
	if ctx == nil {
		return nil, errNilContext
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, ErrClosed
	}
	q.calls.Add(1)
	return q.calls.Done, nil
}

// actOn runs act, one of the operator's acts on a job (Cancel, Replay,
// RunNow, Delete), in a write transaction on the job's row as it is then,
// and fires the event act returns, if any, after the commit (waking idle
// workers first if wake). act may run more than once (see writer.do): it
// sets its results afresh each time. A missing job is ErrNotFound, and
// every error names op and the ID (see jobError).
func (q *Queue) actOn(ctx context.Context, op string, id int64, wake bool, act func(tx execer, row *jobRow, now time.Time) (Event, error)) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var ev Event
	err = q.write(ctx, func(tx execer) error {
		var row jobRow
		if err := tx.GetContext(ctx, &row, jobByIDSQL, id); err != nil {
			return err
		}
		var err error
		ev, err = act(tx, &row, q.now())
		return err
	})
	if err != nil {
		return jobError(op, id, err)
	}
	if ev.Type != "" {
		if wake {
			q.notify()
		}
		q.emit(ev)
	}
	return nil
}

// isClosing reports whether Close has begun.
func (q *Queue) isClosing() bool {
	select {
	case <-q.closing:
		return true
	default:
		return false
	}
}

// write runs fn in a write transaction through the group-commit writer.
// The caller has entered (see enter) or runs inside Work.
func (q *Queue) write(ctx context.Context, fn func(tx execer) error) error {
	return q.submit(&writeOp{ctx: ctx, fn: fn})
}

// submit is write for a writeOp that also claims (ask) or is light.
func (q *Queue) submit(op *writeOp) error {
	if q.readOnly() {
		return ErrReadOnly
	}
	return q.w.do(op)
}

// readOnly reports whether the Queue came from OpenReadOnly.
func (q *Queue) readOnly() bool { return q.w.conn == nil }

// notify wakes every idle Work loop of this Queue.
func (q *Queue) notify() {
	q.mu.Lock()
	close(q.wake)
	q.wake = make(chan struct{})
	q.mu.Unlock()
}

// wakeChan returns the channel the next notify closes.
func (q *Queue) wakeChan() <-chan struct{} {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.wake
}

// rand returns one uniform draw from Options.Rand, serialising the calls.
func (q *Queue) rand() float64 {
	q.randMu.Lock()
	defer q.randMu.Unlock()
	return q.opts.Rand()
}

// now reads the injected clock.
func (q *Queue) now() time.Time { return q.clock.Now() }

// timerAt arms a timer on the injected clock that fires when the clock
// reads at, or at once if it already does. A clock's timer counts from the
// moment it is armed; a clock that a test steps ([clock.Mock]) may step
// between the reading of the time and the arming, and a timer counted from
// the time read would end that step late: never, if the test then holds
// the clock at at. So on such a clock timerAt arms again while a step came
// between, up to three times (a clock that steps on by itself keeps the
// last timer).
func (q *Queue) timerAt(at time.Time) *clock.Timer {
	_, stepped := q.clock.(interface{ Add(time.Duration) })
	for try := 1; ; try++ {
		now := q.now()
		t := q.clock.Timer(max(0, at.Sub(now))) // a mock moves back to a timer's end in the past
		if !stepped || try == 3 || q.now().Equal(now) {
			return t
		}
		t.Stop()
	}
}
