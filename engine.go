package litequeue

import (
	"context"
	"time"
)

// engine is the database behind a Queue: what a Queue does differently on
// each database it can keep its jobs in. sqliteEngine (sqlite.go) is the
// file's. Everything else is shared by every engine: the decision of what
// follows a run (decide.go), storing it (store.go), and the plain SQL that
// both SQLite and PostgreSQL accept.
//
// It is shaped for a PostgreSQL engine: there claim is one UPDATE … WHERE
// id IN (SELECT … FOR UPDATE SKIP LOCKED) that bumps the token and the
// attempt in the same statement, insertJobs an INSERT … SELECT FROM
// unnest(…) WITH ORDINALITY, a unique key an INSERT … ON CONFLICT DO
// NOTHING, watch LISTEN/NOTIFY; lock takes nothing (row locks order the
// writers), begin a plain BEGIN, and retry reports serialization failures.
type engine interface {
	// lock takes the lock that orders litequeue's writers across
	// processes, before a write transaction begins; unlock releases it
	// after the transaction ends.
	lock() error
	unlock()
	// begin begins a write transaction on the writer's connection; a
	// batch that is not durable (see durable) may commit without an fsync.
	begin(c *stmtConn, durable bool) error
	// commit commits the transaction begun on c. A failed COMMIT is
	// errCommit: a *commitLost if the connection was lost and the
	// server can tell later whether it took effect.
	commit(c *stmtConn) error
	// claim finds, in tx, up to q.limit due jobs of q's kinds and queues,
	// in priority, then RunAt, then ID order, calls lease on each row,
	// which makes it the row of a running job, and writes those it took
	// (lease returned true) so.
	claim(ctx context.Context, tx execer, q claimQuery, lease func(*jobRow) bool) error
	// addHistory adds the history rows, in their order.
	addHistory(ctx context.Context, tx execer, rows []*historyRow) error
	// lockKind makes the claimers of kind take turns until tx ends, so
	// that what one counts of the kind's runs (see limits.go) is not
	// changed by another meanwhile. An engine whose writers take turns
	// anyway takes nothing.
	lockKind(ctx context.Context, tx execer, kind string) error
	// insertJobs inserts the batch's jobs, due at runAt, in one statement,
	// and returns their IDs in the order of the payloads; none if the
	// batch's UniqueKey is taken by a live job, which insert then reads.
	insertJobs(ctx context.Context, tx execer, b *enqueueBatch, runAt, now time.Time) ([]int64, error)
	// watch returns a cheap way for an idle worker to learn that someone
	// may have written; an engine that is told of writes also wakes the
	// loop for each (see waker).
	watch(w waker) (changes, error)
	// compact gives the room of purged rows back, and warns of a log that
	// keeps growing; the janitor calls it after each sweep.
	compact(ctx context.Context, write func(context.Context, func(execer) error) error) error
	// retry reports whether a transaction that failed with err may begin
	// again: the database was busy.
	retry(err error) bool
	// lost reports whether err says that its connection is gone.
	lost(err error) bool
	close() error
}

// claimQuery says which jobs a claim takes.
type claimQuery struct {
	kinds  []string // the kinds with a handler
	queues []string // nil: every queue
	paused []string // queues to leave alone
	limit  int
	now    time.Time
}

// A waker is how a watch wakes a Work loop for other processes' writes.
// room tells whether the loop has room for a job: a loop whose every place
// is taken needs no wake-up, since it claims, reading what is committed
// then, as soon as a run ends. A watch for which finding out costs a read
// asks room first, and while the loop has none, waits until the loop,
// asleep with room, says so (idled; see notifier.dormant). nil room:
// always room.
type waker struct {
	wake func()
	room func() bool
	idle chan struct{} // holds a token from idled until the watch takes it
}

// newWaker returns a waker for a loop whose room room tells.
func newWaker(wake func(), room func() bool) waker {
	return waker{wake: wake, room: room, idle: make(chan struct{}, 1)}
}

// wanted reports whether a wake-up would serve the loop now.
func (w waker) wanted() bool { return w.room == nil || w.room() }

// idled tells the watch that the loop waits with room for a job; it does
// not block.
func (w waker) idled() {
	select {
	case w.idle <- struct{}{}:
	default: // told already
	}
}

// changes tells whether anyone committed to the database since the last
// call of changed; true on the first. poll is how long an idle Work may
// sleep without looking: short where no one wakes it for other
// processes' writes.
type changes interface {
	changed(ctx context.Context) (bool, error)
	poll() time.Duration
	close() error
}
