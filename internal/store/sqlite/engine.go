package sqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// Engine is the engine of a Queue in one SQLite file (see store.Engine):
// the flock that orders writers across processes, BEGIN IMMEDIATE and the
// synchronous level per batch, the claim through INDEXED BY and
// json_each, the batch insert through json_each and unhex, data_version
// for wake-ups, incremental vacuum and checkpoints, and SQLITE_BUSY. The
// pragmas set on every connection are in dsn (file.go); the checks of the
// file and its schema in file.go and migrate.go; the copy of the file
// and the report on its health in backup.go and health.go.
type Engine struct {
	path        string
	synchronous string
	full        bool      // synchronous=FULL configured: durable commits fsync
	checkpoint  string    // Config.Checkpoint: "off" leaves checkpoints to a replicator
	db          *sqlx.DB  // litequeue's own reads
	writes      *sqlx.DB  // the writer's pool of one connection; nil: read-only
	app         *sqlx.DB  // the app's pool
	version     int       // litequeue's schema version in the file when it was opened
	recorded    bool      // the file has the tables of store.Info.Recorded
	composed    bool      // the file has the tables of store.Info.Composed
	flock       *fileLock // nil on a read-only Engine
	logger      *slog.Logger
	walWarned   atomic.Int64  // the -wal size last warned about (see walGrowth)
	notifyOff   bool          // Work polls only, without file notifications (see SetWatch)
	poll        time.Duration // Work's poll, with or without notifications; 0: the defaults (see watch)
	notifiers   notifiers     // the watches' notifiers, off the file while the writer holds (see notifiers)
}

// Mode is what Open may do with the file.
type Mode int

// The modes of Open.
const (
	Create   Mode = iota // Open: create a missing file, adopt a SQLite file without litequeue's tables
	Existing             // OpenExisting: only a file that has litequeue's tables
	ReadOnly             // OpenReadOnly: change nothing
)

// Config configures Open.
type Config struct {
	Mode        Mode
	Synchronous string // "full" or "normal"
	Checkpoint  string // "off" leaves checkpoints to a replicator
	Logger      *slog.Logger
	Schema      string // the file's schema (schema.sql), created or completed at Open
	ReadPool    int    // how many connections litequeue's own reads may use
}

// Open opens the litequeue file at path as c.Mode allows: it checks the
// file, creates it (mode 0600) if it may and must, migrates its schema
// unless read-only, and opens its pools. Every refusal comes before the
// first write.
func Open(path string, c Config) (_ *Engine, err error) {
	e := &Engine{path: path, synchronous: c.Synchronous, full: c.Synchronous == "full",
		checkpoint: c.Checkpoint, logger: c.Logger}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	// The file is checked, and the write lock opened, before anything
	// writes to it; the read pool opens only once the file is in WAL.
	f, err := openFile(path, c.Mode, c.Synchronous, c.Checkpoint)
	if err != nil {
		return nil, err
	}
	e.db, e.flock, e.version = f.db, f.lock, f.version
	if c.Mode == ReadOnly {
		e.db.SetMaxOpenConns(c.ReadPool)
		e.db.SetMaxIdleConns(c.ReadPool)
		e.recorded, err = hasTables(context.Background(), e.db, recordTables)
		if err == nil {
			e.composed, err = hasTables(context.Background(), e.db, composeTables)
		}
		return e, err
	}
	e.writes, e.db = f.db, nil
	if err := migrate(context.Background(), e.writes, c.Schema); err != nil {
		return nil, err
	}
	if e.db, err = openDB(path, writeAccess, c.Synchronous, c.Checkpoint, c.ReadPool); err != nil {
		return nil, err
	}
	e.app, err = openAppDB(path, c.Synchronous, c.Checkpoint)
	return e, err
}

// appIdleConns is how many of the app's connections stay open between
// uses.
const appIdleConns = 4

// openAppDB opens the pool that Queue.DB returns, apart from the pool of
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

// Serial is true: the file's writers take turns, through the flock and
// SQLite's write lock.
func (e *Engine) Serial() bool { return true }

// NotifyAtCommit does nothing: the other processes' watches see the
// commit itself.
func (e *Engine) NotifyAtCommit(context.Context, store.Execer) error { return nil }

// TellsOwn is false: a Queue's notifiers are off the file while its own
// writer is in a transaction (see notifiers).
func (e *Engine) TellsOwn() bool { return false }

// Info describes the open file: its pools, and what the schema found
// there has. A read-only Engine has no writer's pool, and the app reads
// on litequeue's own pool.
func (e *Engine) Info() store.Info {
	readOnly := e.writes == nil
	info := store.Info{
		Reads: e.db, Writes: e.writes, App: e.app,
		JobColumns:   store.FileJobColumns(e.version, readOnly),
		Flow:         !readOnly || e.version >= 5,
		Recorded:     !readOnly || e.recorded, // Open completes the schema
		Composed:     !readOnly || e.composed,
		Dependencies: !readOnly || e.version >= 7,
		Uncounted:    readOnly && e.version < 6,
	}
	if readOnly {
		info.App = e.db
	}
	return info
}

// SetWatch sets how the Work loops that watch the file from now on learn
// of other processes' writes: with the file system's notifications or
// without, and, if poll is above 0, how often they look on their own. For
// tests of the file's wake-ups only.
func (e *Engine) SetWatch(notify bool, poll time.Duration) {
	e.notifyOff, e.poll = !notify, poll
}

func (e *Engine) Lock() error { return e.flock.lock() }

// Unlock puts the notifiers back on the file, if begin took them off,
// before another process's writer can take the flock.
func (e *Engine) Unlock() {
	e.notifiers.release()
	e.flock.unlock()
}

// Close closes the pools and the write lock's file.
func (e *Engine) Close() error {
	var errs []error
	for _, db := range []*sqlx.DB{e.writes, e.db, e.app} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if e.flock != nil {
		errs = append(errs, e.flock.close())
	}
	return errors.Join(errs...)
}

// Begin sets the synchronous level of the batch (see setDurable) and
// begins IMMEDIATE: the transaction holds the write lock from its start,
// so that it never fails with SQLITE_BUSY halfway. The notifiers are off
// the file while it runs (see notifiers).
func (e *Engine) Begin(c *store.Conn, durable bool) error {
	e.notifiers.release() // after a transaction of this lock, which the writer runs again
	if err := setDurable(c, e.full, durable); err != nil {
		return err
	}
	if err := c.Exec(`BEGIN IMMEDIATE`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	e.notifiers.hold()
	return nil
}

// Commit commits; a connection to a file is never lost, so a failed
// COMMIT is store.ErrCommit alone.
func (e *Engine) Commit(c *store.Conn) error {
	if err := c.Exec(`COMMIT`); err != nil {
		return fmt.Errorf("%w: %w", store.ErrCommit, err)
	}
	return nil
}

// ServerNow fails: a file keeps no clock of its own (see
// store.Info.ServerClock).
func (e *Engine) ServerNow(context.Context, store.Execer) (time.Time, error) {
	return time.Time{}, errors.New("a file keeps no clock of its own")
}

// setDurable sets the synchronous level for the next commit: with full
// configured, FULL for a durable batch and NORMAL for a light one. A
// failure to relax is of no consequence (the commit is fsynced); a
// failure to restore FULL fails the batch.
func setDurable(c *store.Conn, full, durable bool) error {
	relax := full && !durable
	if relax == c.Relaxed {
		return nil
	}
	if relax {
		if c.Exec(`PRAGMA synchronous = NORMAL`) == nil {
			c.Relaxed = true
		}
		return nil
	}
	if err := c.Exec(`PRAGMA synchronous = FULL`); err != nil {
		return fmt.Errorf("restore synchronous=FULL: %w", err)
	}
	c.Relaxed = false
	return nil
}

// claimUpdateSQL leases every claimed row in one statement, whatever
// their number: its one argument of its own is a JSON array with, for
// each row, [id, attempt, token, max_tries, retry_delay] (the values that
// differ from row to row).
const claimUpdateSQL = `UPDATE litequeue_jobs
	SET state = 'running', attempt = l.value ->> 1, token = l.value ->> 2, lease_until = ?,
	    started_at = ?, worker = ?, max_tries = l.value ->> 3, retry_delay = l.value ->> 4, cancel = 0
	FROM json_each(?) AS l
	WHERE litequeue_jobs.id = l.value ->> 0`

// Claim reads the checkpoints of the jobs it leased in a statement of
// their own, in the process.
func (e *Engine) Claim(ctx context.Context, tx store.Execer, cq store.ClaimQuery, lease func(*store.JobRow) bool) (map[int64][]byte, error) {
	if len(cq.Kinds) == 0 {
		return nil, nil
	}
	query, args, err := claimQuery(ctx, tx, cq)
	if err != nil || query == "" {
		return nil, err
	}
	var rows []store.JobRow
	if err := tx.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, err
	}
	taken := rows[:0]
	for i := range rows {
		if lease(&rows[i]) {
			taken = append(taken, rows[i])
		}
	}
	if rows = taken; len(rows) == 0 {
		return nil, nil
	}
	// claimUpdateSQL's array: for each row, the values that differ.
	values := store.AppendJSONArray(make([]byte, 0, 64*len(rows)), len(rows), func(b []byte, i int) []byte {
		r := &rows[i]
		v := [...]int64{r.ID, int64(r.Attempt), r.Token, int64(r.MaxTries), r.RetryDelay}
		return store.AppendJSONArray(b, len(v), func(b []byte, j int) []byte { return strconv.AppendInt(b, v[j], 10) })
	})
	r := &rows[0]
	if _, err = tx.ExecContext(ctx, claimUpdateSQL, r.LeaseUntil, r.StartedAt, r.Worker, string(values)); err != nil {
		return nil, err
	}
	if err := store.CountClaimed(ctx, tx, rows); err != nil { // the file has no triggers: see store.Deltas
		return nil, err
	}
	ids := make([]int64, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	return store.JobsCheckpoints(ctx, tx, ids)
}

// LockKey takes nothing: the file's writers take turns.
func (e *Engine) LockKey(context.Context, store.Execer, string, string) error { return nil }

const insertJobSQL = `INSERT INTO litequeue_jobs
	(queue, kind, payload, state, priority, max_tries, own_max_tries, run_at, created_at, unique_key, metadata, expires_at)
	VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)`

// insertJobsSQL adds many jobs in one statement. Its last argument is a
// JSON array of the payloads, in hex, inserted in its order.
const insertJobsSQL = `INSERT INTO litequeue_jobs
	(queue, kind, payload, state, priority, max_tries, own_max_tries, run_at, created_at, metadata, expires_at)
	SELECT ?, ?, unhex(p.value), 'pending', ?, ?, ?, ?, ?, ?, ? FROM json_each(?) AS p ORDER BY p.key`

// InsertJobs inserts one job with one plain statement, and many with
// one statement for all (a statement per row costs several times the row
// itself). A UniqueKey, which only a batch of one can have, cannot be
// taken meanwhile: the insert and insert's look for the key's live job
// are one step, as writers take turns.
func (e *Engine) InsertJobs(ctx context.Context, tx store.Execer, j *store.NewJobs) ([]int64, error) {
	var res sql.Result
	var err error
	if len(j.Payloads) == 1 {
		res, err = tx.ExecContext(ctx, insertJobSQL, j.Queue, j.Kind, store.PayloadColumn(j.Payloads[0]), j.Priority,
			j.MaxTries, j.OwnMaxTries, j.RunAt, j.CreatedAt, store.NullString(j.UniqueKey), j.Metadata, j.ExpiresAt)
	} else {
		res, err = tx.ExecContext(ctx, insertJobsSQL, j.Queue, j.Kind, j.Priority,
			j.MaxTries, j.OwnMaxTries, j.RunAt, j.CreatedAt, j.Metadata, j.ExpiresAt, hexArray(j.Payloads))
	}
	if err != nil {
		return nil, err
	}
	if err := store.CountInserted(ctx, tx, j.Queue, j.Kind, len(j.Payloads)); err != nil { // the file has no triggers: see store.Deltas
		return nil, err
	}
	return insertedIDs(res, len(j.Payloads))
}

// insertedIDs returns the IDs of the n jobs that res inserted, in the
// order inserted. They are n consecutive IDs ending at the last one: each
// row of one statement gets one more than the row before it, and as
// litequeue_jobs's id is AUTOINCREMENT, that is never an ID a deleted job
// had, nor, at the largest ID, a random one (the insert fails instead).
// litequeue has no trigger that inserts jobs. Reading them so costs
// nothing, where a RETURNING clause buffered and scanned a row per job.
func insertedIDs(res sql.Result, n int) ([]int64, error) {
	last, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	got, err := res.RowsAffected()
	if err != nil {
		return nil, err
	}
	if got != int64(n) {
		return nil, fmt.Errorf("inserted %d jobs of %d", got, n)
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = last - int64(n-1-i)
	}
	return ids, nil
}

// hexArray is the JSON array of the payloads in hex.
func hexArray(payloads [][]byte) string {
	n := 2
	for _, p := range payloads {
		n += 2*len(p) + 3
	}
	return string(store.AppendJSONArray(make([]byte, 0, n), len(payloads), func(b []byte, i int) []byte {
		b = append(b, '"')
		return append(hex.AppendEncode(b, payloads[i]), '"')
	}))
}

// Compact runs the vacuum and watches the -wal's size.
func (e *Engine) Compact(ctx context.Context, write func(context.Context, func(store.Execer) error) error) error {
	if err := e.vacuum(ctx, write); err != nil {
		return err
	}
	e.walGrowth()
	return nil
}

// Vacuum: purged jobs leave free pages in the file. New inserts reuse
// them, but after a burst (a million jobs done and purged) the file would
// keep its peak size for good. In a file with auto_vacuum=INCREMENTAL
// (every file Open created, see migrate) the janitor gives free pages back
// to the file system, vacuumStep at a time, once they are a quarter of the
// file and at least vacuumMinPages: small enough that a busy queue, whose
// free pages are soon reused, is left alone.
const (
	vacuumStep     = 2048 // pages (8 MiB of 4 KiB pages) per sweep
	vacuumMinPages = 256
)

// The vacuum's pragmas; auto_vacuum reads 2 for INCREMENTAL.
const (
	autoVacuumSQL = `PRAGMA auto_vacuum`
	pageCountSQL  = `PRAGMA page_count`
	freePagesSQL  = `PRAGMA freelist_count`
	vacuumSQL     = `PRAGMA incremental_vacuum(2048)` // vacuumStep
	checkpointSQL = `PRAGMA wal_checkpoint(PASSIVE)`
)

// vacuum gives up to vacuumStep free pages back to the file system, if the
// file allows it and enough pages are free. In WAL mode the file shrinks on
// disk when a checkpoint copies the vacuum's pages back, so vacuum asks for
// one at once (PASSIVE: it waits for no one, and does what readers allow),
// unless Options.Checkpoint is "off": then the replicator's next one does.
func (e *Engine) vacuum(ctx context.Context, write func(context.Context, func(store.Execer) error) error) error {
	var mode, pages, free int
	if err := e.db.GetContext(ctx, &mode, autoVacuumSQL); err != nil || mode != 2 {
		return err
	}
	if err := e.db.GetContext(ctx, &pages, pageCountSQL); err != nil {
		return err
	}
	if err := e.db.GetContext(ctx, &free, freePagesSQL); err != nil {
		return err
	}
	if free < vacuumMinPages || free*4 < pages {
		return nil
	}
	err := write(ctx, func(tx store.Execer) error {
		_, err := tx.ExecContext(ctx, vacuumSQL)
		return err
	})
	if err != nil || e.checkpoint == "off" {
		return err
	}
	_, err = e.db.ExecContext(ctx, checkpointSQL)
	return err
}

// walGrowth logs a warning when the -wal file has grown past walWarnSize,
// and again each time it doubles. SQLite's checkpoints cannot empty the
// WAL while a connection, in any process, holds a read transaction begun
// before the frames they would copy back: an unclosed *sql.Rows on the
// DB() of any Queue (an OpenReadOnly one too), or another program reading
// the file. Every commit then
// adds to the WAL — about 40 KB per job run — until that reader ends; the
// next checkpoint empties it, and journal_size_limit cuts the file back.
func (e *Engine) walGrowth() {
	fi, err := os.Stat(e.path + "-wal")
	if err != nil {
		return
	}
	size := fi.Size()
	switch last := e.walWarned.Load(); {
	case size < walWarnSize:
		e.walWarned.Store(0)
	case size >= 2*last:
		e.walWarned.Store(size)
		why := "a read transaction held open (an unclosed *sql.Rows?) keeps checkpoints from emptying it"
		if e.checkpoint == "off" {
			why = "checkpoint is off: is the replicator that checkpoints it (Litestream) running?"
		}
		e.logger.Warn("litequeue: the WAL keeps growing: "+why, "path", e.path+"-wal", "bytes", size)
	}
}

// sqliteBusy is SQLite's primary result code SQLITE_BUSY.
const sqliteBusy = 5

// isBusy reports whether err is SQLite's SQLITE_BUSY.
func isBusy(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && se.Code()&0xff == sqliteBusy
}

func (e *Engine) Retry(err error) bool { return isBusy(err) }

// Lost is false: a connection to a file is never lost.
func (e *Engine) Lost(error) bool { return false }

// watch tells an idle Work loop, with one cheap read, whether the file may
// have changed since it last looked: PRAGMA data_version, asked on a
// connection of the watch's own, changes whenever another connection
// commits — this Queue's writer, another Queue, another process, or the
// app's EnqueueTx. Only then, or when a time it already knows of comes,
// does the loop run its indexed look for due jobs and expired leases. Its
// notifier (notifier.go), if it runs, wakes the loop when the file changes,
// so that the loop need not look often on its own (see poll).
type watch struct {
	db       *sqlx.DB   // one query_only connection
	stmt     *sqlx.Stmt // PRAGMA data_version, prepared once
	version  int64
	notified *sqlx.Stmt // the same, for the notifier
	started  bool
	n        *notifier        // nil: none could start, or notifications are off
	listed   *notifiers       // where n is listed, for the writer
	polls    [2]time.Duration // poll's answer without and with the notifier
}

// Watch returns a new watch of the file, with a notifier that wakes the
// loop for changes of the file, unless notifications are off, Work runs in a
// testing/synctest bubble (see inBubble), or they cannot start (then the
// watch polls every store.PollInterval, and says so in the log).
func (e *Engine) Watch(wk store.Waker) (store.Changes, error) {
	db, err := openDB(e.path, readAccess, e.synchronous, e.checkpoint, 1)
	if err != nil {
		return nil, err
	}
	stmt, err := db.Preparex(`PRAGMA data_version`)
	if err != nil {
		db.Close()
		return nil, err
	}
	w := &watch{db: db, stmt: stmt, polls: [2]time.Duration{store.PollInterval, notifiedPoll}}
	if w.notified, err = db.Preparex(`PRAGMA data_version`); err != nil {
		w.Close()
		return nil, err
	}
	if e.poll > 0 {
		w.polls = [2]time.Duration{e.poll, e.poll}
	}
	if fileNotifications && !e.notifyOff && !inBubble() {
		if w.n, err = notify(e.path, w.notifiedVersion, wk, e.logger); err != nil {
			e.logger.Warn("litequeue: cannot watch the file for other processes' writes: looking for them every "+w.polls[0].String(), "path", e.path, "err", err)
		} else {
			w.listed = &e.notifiers
			w.listed.add(w.n)
		}
	}
	return w, nil
}

// notifiedVersion is data_version, for the notifier, on the watch's
// connection.
func (w *watch) notifiedVersion() (int64, error) {
	var v int64
	err := w.notified.Get(&v)
	return v, err
}

// Changed reports whether anyone committed to the file since the last call;
// true on the first.
func (w *watch) Changed(ctx context.Context) (bool, error) {
	var v int64
	// A pragma on the watch's own connection, which ends at once: with a
	// context that can end, the driver would start a goroutine at every
	// look to interrupt it.
	if err := w.stmt.GetContext(context.WithoutCancel(ctx), &v); err != nil {
		return true, err
	}
	changed := !w.started || v != w.version
	w.version, w.started = v, true
	return changed, nil
}

// Poll is notifiedPoll while the notifier runs and the file has been quiet
// (for recentChange after an event, afterRelease after the Queue's own
// writer let go of it), store.PollInterval otherwise (see notifier.go).
func (w *watch) Poll() time.Duration {
	if w.n.running() && w.n.quiet() {
		return w.polls[1]
	}
	return w.polls[0]
}

func (w *watch) Close() error {
	if w.listed != nil {
		w.listed.remove(w.n)
	}
	err := w.n.close()
	w.stmt.Close()
	if w.notified != nil {
		w.notified.Close()
	}
	return errors.Join(err, w.db.Close())
}
