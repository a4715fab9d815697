package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"
)

// Engine is the database behind a Queue: what a Queue does differently on
// each database it can keep its jobs in. The file's is store/sqlite's,
// the server's store/postgres's. Everything else is shared by every
// engine: the plain SQL that both SQLite and PostgreSQL accept, in this
// package.
//
// It is shaped for both: on a server, claim is one UPDATE … WHERE id IN
// (SELECT … FOR UPDATE SKIP LOCKED) that bumps the token and the attempt
// in the same statement, InsertJobs an INSERT … SELECT FROM unnest(…)
// WITH ORDINALITY, a unique key an INSERT … ON CONFLICT DO NOTHING, Watch
// LISTEN/NOTIFY; Lock takes nothing (row locks order the writers), Begin
// a BEGIN that, for a durable batch, reads the transaction's ID in the
// same round trip (for Commit), and Retry reports serialization failures.
type Engine interface {
	// Lock takes the lock that orders litequeue's writers across
	// processes, before a write transaction begins; Unlock releases it
	// after the transaction ends.
	Lock() error
	Unlock()
	// Begin begins a write transaction on the writer's connection; a
	// batch that is not durable may commit without an fsync.
	Begin(c *Conn, durable bool) error
	// Commit commits the transaction begun on c. A failed COMMIT is
	// ErrCommit: a *CommitLost if the connection was lost and the server
	// can tell later whether it took effect.
	Commit(c *Conn) error
	// Claim finds, in tx, up to q.Limit due jobs of q's kinds and
	// queues, in priority, then RunAt, then ID order, calls lease on
	// each row, which makes it the row of a running job, and writes
	// those it took (lease returned true) so. It returns the checkpoints
	// of the jobs it leased that have one (litequeue_checkpoints), by job
	// ID, read in the statement of the lease where a round trip costs.
	Claim(ctx context.Context, tx Execer, q ClaimQuery, lease func(*JobRow) bool) (map[int64][]byte, error)
	// LockKey makes the transactions that lock key in space (the claims
	// that count a kind's runs, the copies into the database) take turns
	// until tx ends, so that what one counts or reads is not changed by
	// another meanwhile. An engine whose writers take turns anyway takes
	// nothing.
	LockKey(ctx context.Context, tx Execer, space, key string) error
	// InsertJobs inserts the jobs in one statement, and returns their
	// IDs in the order of the payloads. It never makes a second live job
	// of a UniqueKey: where another transaction may have inserted the
	// key since the caller looked for its live job (a server), it
	// inserts nothing and returns no IDs; where the look and the insert
	// are one step (the file's writers take turns), the insert fails.
	InsertJobs(ctx context.Context, tx Execer, jobs *NewJobs) ([]int64, error)
	// Settler stores the ends of a batch of runs (see Writer.settle).
	Settler
	// Watch returns a cheap way for an idle worker to learn that someone
	// may have written; an engine that is told of writes also wakes the
	// loop for each (see Waker).
	Watch(w Waker) (Changes, error)
	// Compact gives the room of purged rows back, and warns of a log
	// that keeps growing; the janitor calls it after each sweep.
	Compact(ctx context.Context, write func(context.Context, func(Execer) error) error) error
	// Health checks the database on litequeue's reads while others work
	// on it, for Queue.Health, and reports what it found: on a file,
	// SQLite's integrity check, the schema version, the application_id
	// and journal mode, the sizes of the file and its -wal, their modes,
	// and a -wal or -shm that the file's writers cannot write; on a
	// server, the schema version only (the server checks its own pages).
	// What a read finds wrong is a problem of the report; the error is
	// for a report that cannot be made (the file cannot be stat'ed).
	Health(ctx context.Context) (*Health, error)
	// Backup writes a consistent copy of the database to the file at
	// path, while others work on it, and replaces a file there only if
	// overwrite; its errors leave path for the caller to name. A file's
	// copy is SQLite's VACUUM INTO, written beside path and renamed into
	// place; a server has no file to copy, and says so.
	Backup(ctx context.Context, path string, overwrite bool) error
	// Retry reports whether a transaction that failed with err may begin
	// again: the database was busy.
	Retry(err error) bool
	// Lost reports whether err says that its connection is gone.
	Lost(err error) bool
	// Serial reports whether the engine's writers take turns, one
	// transaction at a time across every process (the file): then what a
	// write transaction reads stays as it read it until it commits, and
	// a claim need lock nothing to count a kind's runs (see LockKind).
	Serial() bool
	// NotifyAtCommit tells the idle Work loops of every process on the
	// database to look again once tx commits, where a commit alone does
	// not tell them (on a server; the file's watch sees every commit of
	// another process).
	NotifyAtCommit(ctx context.Context, tx Execer) error
	// TellsOwn reports whether this process's loops learn of its own
	// commits through their watch (a server's notifications come back to
	// the process that sent them); the file's watch is off while the
	// process's own writer commits, so the writer wakes them itself (see
	// Writer.WakeOwn).
	TellsOwn() bool
	// ServerNow reads the clock of the database's server in ex, for the
	// check of the Queue's own clock against it (see Info.ServerClock).
	ServerNow(ctx context.Context, ex Execer) (time.Time, error)
	// Info describes the engine's pools and schema, for the Queue that
	// works on them.
	Info() Info
	// Close closes the engine's pools, where it opened them, and what
	// else it holds.
	Close() error
}

// Info describes an engine's pools and schema.
type Info struct {
	Reads  *sqlx.DB // litequeue's own reads
	Writes *sqlx.DB // the writer's pool, of one connection; nil: read-only
	App    *sqlx.DB // the app's pool, returned by Queue.DB
	// Dialect turns litequeue's SQL into the engine's; nil: SQLite's.
	Dialect *Dialect
	// JobColumns are the columns of litequeue_jobs a JobRow scans from
	// this database (see FileJobColumns).
	JobColumns string
	// Flow says that the database has the tables of flow control and of
	// the periodic schedules (schema version 5 on a file).
	Flow bool
	// Recorded says that the database has the tables this version added
	// to version 5 of the file: litequeue_policies (see RecordPolicies),
	// litequeue_throughput (see Throughput) and litequeue_workers (see
	// RecordWorker): every one but a file opened read-only that no binary
	// with them has opened for writing since it was made.
	Recorded bool
	// Composed says that the database has the tables of job outputs,
	// checkpoints and progress (litequeue_outputs, litequeue_checkpoints,
	// litequeue_progress): every one but a file opened read-only that no
	// binary with it has opened for writing since it was made.
	Composed bool
	// Dependencies says that the database has the tables of dependencies
	// (litequeue_deps, litequeue_waits): every one but a file of version 6
	// or older opened read-only.
	Dependencies bool
	// Uncounted says that the database keeps no counts of its jobs
	// (litequeue_counts, see KeptCountByState): a file of version 5 or
	// older opened read-only, whose figures are read by a scan.
	Uncounted bool
	// ServerClock says that the database keeps a clock of its own (a
	// server), which the clocks of the Queues on it must agree with; a
	// file is shared only by the processes of one machine.
	ServerClock bool
}

// PollInterval bounds how long an idle worker sleeps before it looks again
// for jobs written by other processes, where nothing wakes it for them.
const PollInterval = time.Second

// ClaimQuery says which jobs a claim takes.
type ClaimQuery struct {
	Kinds  []string // the kinds with a handler
	Queues []string // nil: every queue
	Paused []string // queues to leave alone
	Limit  int
	Now    time.Time
}

// NewJobs are jobs to insert: one or many of one kind and queue, with the
// same options, differing only in their payloads.
type NewJobs struct {
	Queue       string
	Kind        string
	Payloads    [][]byte
	Priority    int
	MaxTries    int // effective at enqueue; rewritten at claim unless own
	OwnMaxTries int // the job's own, 0 for none
	RunAt       int64
	CreatedAt   int64
	UniqueKey   string // only with one payload
	Metadata    Metadata
	ExpiresAt   sql.NullInt64
}

// A Waker is how a watch wakes a Work loop for other processes' writes.
// Room tells whether the loop has room for a job: a loop whose every
// place is taken needs no wake-up, since it claims, reading what is
// committed then, as soon as a run ends. A watch for which finding out
// costs a read asks Room first, and while the loop has none, waits until
// the loop, asleep with room, says so (Idled). nil Room: always room.
type Waker struct {
	Wake func()
	Room func() bool
	idle chan struct{} // holds a token from Idled until the watch takes it
}

// NewWaker returns a Waker for a loop whose room room tells.
func NewWaker(wake func(), room func() bool) Waker {
	return Waker{Wake: wake, Room: room, idle: make(chan struct{}, 1)}
}

// Wanted reports whether a wake-up would serve the loop now.
func (w Waker) Wanted() bool { return w.Room == nil || w.Room() }

// Idled tells the watch that the loop waits with room for a job; it does
// not block.
func (w Waker) Idled() {
	select {
	case w.idle <- struct{}{}:
	default: // told already
	}
}

// IdleC receives a token after Idled, for the watch that waits for it.
func (w Waker) IdleC() <-chan struct{} { return w.idle }

// Changes tells whether anyone committed to the database since the last
// call of Changed; true on the first. Poll is how long an idle Work may
// sleep without looking: short where no one wakes it for other
// processes' writes.
type Changes interface {
	Changed(ctx context.Context) (bool, error)
	Poll() time.Duration
	Close() error
}
