package litequeue

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// sqliteEngine is the engine of a Queue in one SQLite file (see engine):
// the flock that orders writers across processes, BEGIN IMMEDIATE and the
// synchronous level per batch, the claim through INDEXED BY and
// json_each, the batch insert through json_each and unhex, data_version
// for wake-ups, incremental vacuum and checkpoints, and SQLITE_BUSY. The
// pragmas set on every connection are in dsn (storage.go); the checks of
// the file and its schema in storage.go and migrate.go.
type sqliteEngine struct {
	path        string
	synchronous string
	full        bool      // synchronous=FULL configured: durable commits fsync
	checkpoint  string    // Options.Checkpoint: "off" leaves checkpoints to a replicator
	db          *sqlx.DB  // litequeue's own reads
	flock       *fileLock // nil on a Queue from OpenReadOnly
	logger      *slog.Logger
	walWarned   atomic.Int64  // the -wal size last warned about (see walGrowth)
	notifyOff   bool          // Work polls only, without file notifications (tests: export_test.go)
	poll        time.Duration // Work's poll, with or without notifications; 0: the defaults (see watch)
	notifiers   notifiers     // the watches' notifiers, off the file while the writer holds (see notifiers)
}

func (e *sqliteEngine) lock() error { return e.flock.lock() }

// unlock puts the notifiers back on the file, if begin took them off,
// before another process's writer can take the flock.
func (e *sqliteEngine) unlock() {
	e.notifiers.release()
	e.flock.unlock()
}

func (e *sqliteEngine) close() error {
	if e.flock == nil {
		return nil
	}
	return e.flock.close()
}

// begin sets the synchronous level of the batch (see setDurable) and
// begins IMMEDIATE: the transaction holds the write lock from its start,
// so that it never fails with SQLITE_BUSY halfway. The notifiers are off
// the file while it runs (see notifiers).
func (e *sqliteEngine) begin(c *stmtConn, durable bool) error {
	e.notifiers.release() // after a transaction of this lock, which the writer runs again
	if err := c.setDurable(e.full, durable); err != nil {
		return err
	}
	if err := c.exec(`BEGIN IMMEDIATE`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	e.notifiers.hold()
	return nil
}

func (e *sqliteEngine) commit(c *stmtConn) error {
	if err := c.exec(`COMMIT`); err != nil {
		return fmt.Errorf("%w: %w", errCommit, err)
	}
	return nil
}

// setDurable sets the synchronous level for the next commit: with full
// configured, FULL for a durable batch and NORMAL for a light one. A
// failure to relax is of no consequence (the commit is fsynced); a
// failure to restore FULL fails the batch.
func (c *stmtConn) setDurable(full, durable bool) error {
	relax := full && !durable
	if relax == c.relaxed {
		return nil
	}
	if relax {
		if c.exec(`PRAGMA synchronous = NORMAL`) == nil {
			c.relaxed = true
		}
		return nil
	}
	if err := c.exec(`PRAGMA synchronous = FULL`); err != nil {
		return fmt.Errorf("restore synchronous=FULL: %w", err)
	}
	c.relaxed = false
	return nil
}

// claimSQL walks the claim index in claim order and stops at the limit.
// It leaves alone a job whose expiry has come, which the claim's expiry
// step (see expire.go) did not get to: on PostgreSQL, a row another
// claimer held then. INDEXED BY is SQLite's: without statistics its planner prefers the
// (kind, run_at) index for "kind IN (…)" and then sorts every due job on
// each claim.
const claimSQL = `SELECT ` + jobColumns + ` FROM litequeue_jobs INDEXED BY litequeue_jobs_claim
	WHERE state = 'pending' AND run_at <= ? AND (expires_at IS NULL OR expires_at > ?) AND kind IN (?)`

const claimOrderSQL = ` ORDER BY priority DESC, run_at, id LIMIT ` + limitParam

// limitParam is a LIMIT whose value changes from call to call. SQLite
// plans a plain "LIMIT ?" with the value bound at the time, and so
// compiles the statement again each time the value changes: for the
// claim, whose limit is the number of free workers, that was a parse and
// plan per claim. A cast is not a plain parameter, so the plan holds for
// every value.
const limitParam = `CAST(? AS INTEGER)`

// claimUpdateSQL leases every claimed row in one statement, whatever
// their number: its one argument of its own is a JSON array with, for
// each row, [id, attempt, token, max_tries, retry_delay] (the values that
// differ from row to row).
const claimUpdateSQL = `UPDATE litequeue_jobs
	SET state = 'running', attempt = l.value ->> 1, token = l.value ->> 2, lease_until = ?,
	    started_at = ?, worker = ?, max_tries = l.value ->> 3, retry_delay = l.value ->> 4, cancel = 0
	FROM json_each(?) AS l
	WHERE litequeue_jobs.id = l.value ->> 0`

func (e *sqliteEngine) claim(ctx context.Context, tx execer, cq claimQuery, lease func(*jobRow) bool) error {
	query, args := claimSQL, []any{ms(cq.now), ms(cq.now), cq.kinds}
	if len(cq.queues) > 0 {
		query += ` AND queue IN (?)`
		args = append(args, cq.queues)
	}
	if len(cq.paused) > 0 {
		query += ` AND queue NOT IN (?)`
		args = append(args, cq.paused)
	}
	query, args, err := sqlx.In(query+claimOrderSQL, append(args, cq.limit)...)
	if err != nil {
		return err
	}
	var rows []jobRow
	if err := tx.SelectContext(ctx, &rows, query, args...); err != nil {
		return err
	}
	taken := rows[:0]
	for i := range rows {
		if lease(&rows[i]) {
			taken = append(taken, rows[i])
		}
	}
	if rows = taken; len(rows) == 0 {
		return nil
	}
	// claimUpdateSQL's array: for each row, the values that differ.
	values := appendJSONArray(make([]byte, 0, 64*len(rows)), len(rows), func(b []byte, i int) []byte {
		r := &rows[i]
		v := [...]int64{r.ID, int64(r.Attempt), r.Token, int64(r.MaxTries), r.RetryDelay}
		return appendJSONArray(b, len(v), func(b []byte, j int) []byte { return strconv.AppendInt(b, v[j], 10) })
	})
	r := &rows[0]
	_, err = tx.ExecContext(ctx, claimUpdateSQL, r.LeaseUntil, r.StartedAt, r.Worker, string(values))
	return err
}

// historyChunk is how many rows one statement of addHistory adds. A
// statement costs the file several times the row it writes; a fixed chunk
// keeps the statements few in kind, as each is prepared once (see
// stmtCache), and the rows left over take a statement each.
const historyChunk = 8

// addHistory adds the rows a chunk of historyChunk at a time (one INSERT
// of many rows' VALUES), and the rest one at a time.
func (e *sqliteEngine) addHistory(ctx context.Context, tx execer, rows []*historyRow) error {
	var args []any // reused from chunk to chunk
	for len(rows) >= historyChunk {
		args = args[:0]
		for _, h := range rows[:historyChunk] {
			args = h.values(args)
		}
		if _, err := tx.ExecContext(ctx, addHistorySQL, args...); err != nil {
			return err
		}
		rows = rows[historyChunk:]
	}
	return addHistoryEach(ctx, tx, rows)
}

// addHistorySQL is insertAttemptSQL for historyChunk rows.
var addHistorySQL = insertAttemptSQL + strings.Repeat(", "+attemptValues, historyChunk-1)

// lockKind takes nothing: the file's writers take turns.
func (e *sqliteEngine) lockKind(context.Context, execer, string) error { return nil }

const insertJobSQL = `INSERT INTO litequeue_jobs
	(queue, kind, payload, state, priority, max_tries, own_max_tries, run_at, created_at, unique_key, metadata, expires_at)
	VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)`

// insertJobsSQL adds many jobs in one statement. Its last argument is a
// JSON array of the payloads, in hex, inserted in its order.
const insertJobsSQL = `INSERT INTO litequeue_jobs
	(queue, kind, payload, state, priority, max_tries, own_max_tries, run_at, created_at, metadata, expires_at)
	SELECT ?, ?, unhex(p.value), 'pending', ?, ?, ?, ?, ?, ?, ? FROM json_each(?) AS p ORDER BY p.key`

// insertJobs inserts one job with one plain statement, and many with
// one statement for all (a statement per row costs several times the row
// itself). A UniqueKey, which only a batch of one can have, cannot be
// taken meanwhile: the insert and insert's look for the key's live job
// are one step, as writers take turns.
func (e *sqliteEngine) insertJobs(ctx context.Context, tx execer, b *enqueueBatch, runAt, now time.Time) ([]int64, error) {
	var res sql.Result
	var err error
	if len(b.payloads) == 1 {
		res, err = tx.ExecContext(ctx, insertJobSQL, b.cfg.queue, b.kind, payloadColumn(b.payloads[0]), b.cfg.priority,
			b.maxTries, b.cfg.maxTries, ms(runAt), ms(now), nullString(b.cfg.uniqueKey), b.cfg.metadata, b.expiresAt(runAt))
	} else {
		res, err = tx.ExecContext(ctx, insertJobsSQL, b.cfg.queue, b.kind, b.cfg.priority,
			b.maxTries, b.cfg.maxTries, ms(runAt), ms(now), b.cfg.metadata, b.expiresAt(runAt), hexArray(b.payloads))
	}
	if err != nil {
		return nil, err
	}
	return insertedIDs(res, len(b.payloads))
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
	return string(appendJSONArray(make([]byte, 0, n), len(payloads), func(b []byte, i int) []byte {
		b = append(b, '"')
		return append(hex.AppendEncode(b, payloads[i]), '"')
	}))
}

// compact runs the vacuum and watches the -wal's size.
func (e *sqliteEngine) compact(ctx context.Context, write func(context.Context, func(execer) error) error) error {
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
func (e *sqliteEngine) vacuum(ctx context.Context, write func(context.Context, func(execer) error) error) error {
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
	err := write(ctx, func(tx execer) error {
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
func (e *sqliteEngine) walGrowth() {
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

func (e *sqliteEngine) retry(err error) bool { return isBusy(err) }

// lost is false: a connection to a file is never lost.
func (e *sqliteEngine) lost(error) bool { return false }

// watch tells an idle Work loop, with one cheap read, whether the file may
// have changed since it last looked: PRAGMA data_version, asked on a
// connection of the watch's own, changes whenever another connection
// commits — this Queue's writer, another Queue, another process, or the
// app's EnqueueTx. Only then, or when a time it already knows of comes,
// does the loop run its indexed look for due jobs and expired leases. Its
// notifier (watch.go), if it runs, wakes the loop when the file changes,
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

// watch returns a new watch of the file, with a notifier that wakes the
// loop for changes of the file, unless notifications are off, Work runs in a
// testing/synctest bubble (see inBubble), or they cannot start (then the
// watch polls every pollInterval, and says so in the log).
func (e *sqliteEngine) watch(wk waker) (changes, error) {
	db, err := openDB(e.path, readAccess, e.synchronous, e.checkpoint, 1)
	if err != nil {
		return nil, err
	}
	stmt, err := db.Preparex(`PRAGMA data_version`)
	if err != nil {
		db.Close()
		return nil, err
	}
	w := &watch{db: db, stmt: stmt, polls: [2]time.Duration{pollInterval, notifiedPoll}}
	if w.notified, err = db.Preparex(`PRAGMA data_version`); err != nil {
		w.close()
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

// changed reports whether anyone committed to the file since the last call;
// true on the first.
func (w *watch) changed(ctx context.Context) (bool, error) {
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

// poll is notifiedPoll while the notifier runs and the file has been quiet
// for recentChange, pollInterval otherwise (see watch.go).
func (w *watch) poll() time.Duration {
	if w.n.running() && w.n.quiet() {
		return w.polls[1]
	}
	return w.polls[0]
}

func (w *watch) close() error {
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
