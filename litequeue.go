package litequeue

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/jmoiron/sqlx"
)

// Queue is a job queue kept in one SQLite file. It is safe for concurrent
// use by many goroutines, and several Queues — in one process or several —
// may work on the same file. After Close every method returns ErrClosed.
type Queue struct {
	opts   Options // resolved: no zero fields
	clock  clock.Clock
	path   string
	db     *sqlx.DB // reads, and the app's own work through DB()
	wdb    *sqlx.DB // the writer's pool of one connection
	w      writer   // every write litequeue makes
	worker string   // default worker name: host:pid

	randMu  sync.Mutex
	eventMu sync.Mutex

	mu       sync.RWMutex
	handlers map[string]*handler
	wake     chan struct{} // closed and replaced to wake idle workers
	closed   bool
	closing  chan struct{}  // closed by Close
	works    sync.WaitGroup // running Work calls
	calls    sync.WaitGroup // other public calls in progress
}

// readPoolSize bounds the connections of the pool that serves reads and
// the app's own use of DB().
const readPoolSize = 4

// Open opens the queue in the SQLite file at path, creating the file (mode
// 0600) and litequeue's tables if they are missing, and switching the file
// to WAL. path is a file path, never a DSN: nothing in it can change a
// pragma. Open refuses, leaving the file as it was, a file that is not
// SQLite, another application's SQLite file, and a schema newer than this
// binary. The app may keep its own tables in the same file (see DB).
// Open starts no goroutine.
func Open(path string, opts Options) (*Queue, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, fmt.Errorf("litequeue: open %s: %w", path, err)
	}
	if err := prepareFile(path); err != nil {
		return nil, fmt.Errorf("litequeue: open %s: %w", path, err)
	}
	wdb, err := openDB(path, false, opts.Synchronous, 1)
	if err != nil {
		return nil, fmt.Errorf("litequeue: open %s: %w", path, err)
	}
	ctx := context.Background()
	if err := checkFile(ctx, wdb, path); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("litequeue: open: %w", err)
	}
	if err := migrate(ctx, wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("litequeue: open %s: %w", path, err)
	}
	db, err := openDB(path, false, opts.Synchronous, readPoolSize)
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("litequeue: open %s: %w", path, err)
	}
	lock, err := openFileLock(path)
	if err != nil {
		wdb.Close()
		db.Close()
		return nil, fmt.Errorf("litequeue: open %s: %w", path, err)
	}
	conn, err := newStmtConn(ctx, wdb)
	if err != nil {
		wdb.Close()
		db.Close()
		lock.close()
		return nil, fmt.Errorf("litequeue: open %s: %w", path, err)
	}
	host, _ := os.Hostname()
	return &Queue{
		opts:     opts,
		clock:    opts.Clock,
		path:     path,
		db:       db,
		wdb:      wdb,
		w:        writer{conn: conn, lock: lock},
		worker:   fmt.Sprintf("%s:%d", host, os.Getpid()),
		handlers: make(map[string]*handler),
		wake:     make(chan struct{}),
		closing:  make(chan struct{}),
	}, nil
}

// Close stops every Work call on the queue (as if its context were done,
// with the same grace for running handlers), then closes the file. It is
// safe to call more than once; later calls return nil.
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
	err := q.w.conn.close()
	if err2 := q.wdb.Close(); err == nil {
		err = err2
	}
	if err2 := q.db.Close(); err == nil {
		err = err2
	}
	if err2 := q.w.lock.close(); err == nil {
		err = err2
	}
	return err
}

// DB returns the queue's connection pool, for the app's own tables and
// transactions in the same file. Transactions begun on it take SQLite's
// write lock at BEGIN (IMMEDIATE), so they can be passed to EnqueueTx,
// MarkTx and CompleteTx. A transaction held open blocks litequeue's own
// writes until it ends.
func (q *Queue) DB() *sqlx.DB { return q.db }

// enter admits one public call, returning ErrClosed after Close; Close
// waits for the admitted calls to leave before it closes the file.
func (q *Queue) enter() (leave func(), err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, ErrClosed
	}
	q.calls.Add(1)
	return q.calls.Done, nil
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
	return q.w.do(ctx, fn)
}

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

// emit calls OnEvent for each event, one call at a time, recovering and
// logging a panic so that it never breaks a worker.
func (q *Queue) emit(events ...Event) {
	if q.opts.OnEvent == nil || len(events) == 0 {
		return
	}
	q.eventMu.Lock()
	defer q.eventMu.Unlock()
	for _, e := range events {
		q.callOnEvent(e)
	}
}

func (q *Queue) callOnEvent(e Event) {
	defer func() {
		if r := recover(); r != nil {
			q.opts.Logger.Error("litequeue: OnEvent panicked", "event", e.Type, "job", e.Job.ID, "panic", r)
		}
	}()
	q.opts.OnEvent(e)
}
