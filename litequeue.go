package litequeue

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/backend"
	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/sqlite"
)

// Queue is a job queue kept in one SQLite file. It is safe for concurrent
// use by many goroutines, and several Queues — in one process or several —
// may work on the same file. After [Queue.Close] every method returns
// [ErrClosed].
type Queue struct {
	opts   Options // resolved: no zero fields
	clock  clock.Clock
	st     *storage
	worker string // default worker name: host:pid
	draws  *draws
	events *emitter
	reg    *registry
	wake   *signal // wakes idle Work loops
	gate   *gate
	enq    *enqueuer
	jan    *janitor
	res    *rescuer
	agenda *agenda
	run    *runner
	acts   *acts
	seal   *sealer // seals and opens payloads with Options.SealKeys

	mu      sync.RWMutex
	closed  bool
	closing chan struct{}  // closed by Close
	works   sync.WaitGroup // running Work calls
	calls   sync.WaitGroup // other public calls in progress

	sched *scheduler // the schedules registered with Periodic

	kinds *handledKinds // the kinds handled: recorded by Work and RunDue, checked by the enqueues
}

// schemaSQL is the file's schema, which the file's engine creates or
// completes at Open.
//
//go:embed schema.sql
var schemaSQL string

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
	q, err := open(path, opts, sqlite.Create)
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
	q, err := open(path, opts, sqlite.Existing)
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
	q, err := open(path, opts, sqlite.ReadOnly)
	if err != nil {
		return nil, openError(path, err)
	}
	return q, nil
}

func open(path string, opts Options, mode sqlite.Mode) (*Queue, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	eng, err := sqlite.Open(path, sqlite.Config{Mode: mode, Synchronous: opts.Synchronous,
		Checkpoint: opts.Checkpoint, Logger: opts.Logger, Schema: schemaSQL, ReadPool: readPoolSize})
	if err != nil {
		return nil, err
	}
	q, err := openOn(context.Background(), eng, opts)
	if err != nil {
		eng.Close()
		return nil, err
	}
	return q, nil
}

func init() {
	backend.OpenQueue = func(ctx context.Context, o any, open func(*slog.Logger) (store.Engine, error)) (any, error) {
		opts, err := o.(Options).resolve()
		if err != nil {
			return nil, err
		}
		eng, err := open(opts.Logger)
		if err != nil {
			return nil, err
		}
		q, err := openOn(ctx, eng, opts)
		if err != nil {
			eng.Close()
			return nil, err
		}
		return q, nil
	}
}

// openOn opens a Queue, whose options are resolved, on the engine eng,
// within ctx. On failure the caller closes eng.
func openOn(ctx context.Context, eng store.Engine, opts Options) (*Queue, error) {
	info := eng.Info()
	q := newQueue(opts)
	q.st = &storage{eng: eng, reads: store.NewPool(info.Reads, info.Dialect, eng.Lost), info: info, cancelled: q.events.dependentsCancelled}
	var skew *clockCheck // a file's Queues read one machine's clock
	if info.ServerClock {
		skew = newClockCheck(opts, eng.ServerNow)
		if err := skew.check(ctx, q.st.reads); err != nil && !errors.As(err, new(*ClockSkewError)) {
			return nil, err // a skew is logged, and refuses claims, not Open
		}
	}
	q.enq = &enqueuer{reg: q.reg, opts: &q.opts, eng: eng, mw: &enqueueMiddleware{mw: opts.EnqueueMiddleware}, seal: q.seal}
	q.gate = &gate{st: q.st, reg: q.reg, clock: q.clock, logger: opts.Logger, events: q.events, wake: q.wake}
	q.jan = newJanitor(q.st, q.clock, q.events, q.worker, &q.opts)
	q.jan.skew = skew
	q.agenda = &agenda{st: q.st, reg: q.reg, gate: q.gate, clock: q.clock}
	q.res = &rescuer{st: q.st, clock: q.clock, gate: q.gate, events: q.events, wake: q.wake,
		logger: opts.Logger, visibility: opts.VisibilityTimeout, skew: skew}
	q.sched = newScheduler(q.st, q.clock, q.enq, q.events, q.wake)
	q.kinds = newHandledKinds(q.st, q.reg, q.clock, &q.opts)
	q.sched.known = q.kinds.check
	q.run = &runner{st: q.st, reg: q.reg, gate: q.gate, events: q.events, draws: q.draws, clock: q.clock,
		logger: opts.Logger, visibility: opts.VisibilityTimeout, worker: q.worker, wake: q.wake,
		closing: q.closing, held: make(map[int64]*lease), skew: skew, seal: q.seal, maxOutput: opts.MaxOutput,
		sweep: q.jan.sweep, firePeriodic: q.sched.fire, rescue: q.res.rescue, nextDue: q.agenda.read, expireDue: expireDue,
		recordKinds: q.kinds.record}
	q.res.held = q.run // the rescuer leaves alone the leases the runner holds
	q.acts = &acts{st: q.st, clock: q.clock, events: q.events, wake: q.wake, worker: q.worker, logger: opts.Logger}
	if info.Writes == nil {
		return q, nil // read-only
	}
	conn, err := store.NewConn(ctx, info.Writes, info.Dialect)
	if err != nil {
		return nil, err
	}
	q.st.w = &store.Writer[*runNote]{Engine: eng, Conn: conn, Steps: q.run, Wake: q.wake.fire, Shard: store.ShardFor(eng)}
	return q, nil
}

// newQueue is a Queue with opts, with no storage yet.
func newQueue(opts Options) *Queue {
	return &Queue{
		opts:    opts,
		clock:   opts.Clock,
		worker:  thisProcess().String(),
		draws:   &draws{rand: opts.Rand},
		events:  &emitter{on: opts.OnEvent, logger: opts.Logger},
		reg:     newRegistry(),
		wake:    newSignal(),
		closing: make(chan struct{}),
		seal:    newSealer(opts.SealKeys),
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
	errs := []error{q.st.reads.CloseStmts()}
	if !q.st.readOnly() {
		errs = append(errs, q.st.w.Conn.Close())
	}
	return errors.Join(append(errs, q.st.eng.Close())...)
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
func (q *Queue) DB() *sqlx.DB { return q.st.info.App }

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

// now reads the injected clock.
func (q *Queue) now() time.Time { return q.clock.Now() }

// Enqueue adds a job of the given kind and returns it as stored, once the
// commit is durable. payload is encoded as JSON, except []byte and
// [json.RawMessage], which are stored byte for byte. It refuses, writing
// nothing: a kind or queue that is not a name (see [NameLimit]), a negative delay, [At] the zero time, a
// due time that Unix milliseconds in an int64 cannot hold (see At),
// [MaxTries] outside 1…50, an [ExpireAfter] that is not positive or that
// no stored time holds, a payload over [Options.MaxPayload], metadata
// out of its bounds (see [Metadata]), with
// [Options.RefuseUnknownKinds] a kind that no handler knows
// ([ErrUnknownKind]), and a job that enqueue middleware refuses (see
// [Queue.UseEnqueue]). An
// in-process [Queue.Work] loop that is idle picks the job up at once.
func (q *Queue) Enqueue(ctx context.Context, kind string, payload any, opts ...EnqueueOption) (*Job, error) {
	jobs, err := q.enqueue(ctx, kind, []any{payload}, opts, false)
	if err != nil {
		return nil, err
	}
	return jobs[0], nil
}

// EnqueueMany adds one job per payload, all with the same options, in one
// transaction: all are added or none. It refuses what [Queue.Enqueue]
// refuses, and [UniqueKey], even for one payload: one key cannot name many
// jobs. With no payloads it checks its arguments and adds nothing.
func (q *Queue) EnqueueMany(ctx context.Context, kind string, payloads []any, opts ...EnqueueOption) ([]*Job, error) {
	return q.enqueue(ctx, kind, payloads, opts, true)
}

// EnqueueTx adds a job inside the caller's transaction, begun on
// [Queue.DB](): the job exists if and only if the caller commits. It fires
// no event, and idle workers notice the job at once where they are told of
// the commit (on a file, by the file system) and otherwise at their next
// look (see [Queue.Work]).
func (q *Queue) EnqueueTx(ctx context.Context, tx *sqlx.Tx, kind string, payload any, opts ...EnqueueOption) (*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if q.st.readOnly() {
		return nil, ErrReadOnly
	}
	batch, err := q.enq.admitted(ctx, q.kinds.enqueueCheck, kind, payload, opts)
	if err != nil {
		return nil, err
	}
	jobs, err := batch.insert(ctx, q.st.appTx(tx), q.now())
	if err != nil {
		return nil, fmt.Errorf("litequeue: enqueue %s: %w", kind, err)
	}
	return jobs[0], nil
}

// enqueue is Enqueue, or EnqueueMany if many.
func (q *Queue) enqueue(ctx context.Context, kind string, payloads []any, opts []EnqueueOption, many bool) ([]*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	batch, err := q.enq.batch(kind, payloads, opts)
	if err == nil {
		err = q.kinds.enqueueCheck(ctx, kind)
	}
	switch {
	case err != nil:
		return nil, err
	case many && batch.cfg.uniqueKey != "":
		return nil, fmt.Errorf("litequeue: enqueue %s: EnqueueMany refuses UniqueKey %q: one key cannot name many jobs", kind, batch.cfg.uniqueKey)
	case len(payloads) == 0:
		return nil, nil
	}
	if err := q.enq.admit(ctx, batch); err != nil {
		return nil, err
	}
	var jobs []*Job
	var at time.Time
	err = q.st.write(ctx, func(tx store.Execer) error {
		at = q.now()
		jobs, err = batch.insert(ctx, tx, at)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("litequeue: enqueue %s: %w", kind, err)
	}
	q.wake.fire()
	q.events.enqueued(at, jobs...)
	return jobs, nil
}

// Handle registers h for jobs of the given kind. Only kinds with a handler
// on this [Queue] are claimed by its [Queue.Work] and [Queue.RunDue]; a
// kind registered while Work runs is claimed from then on, its due jobs at
// once. Handle panics, like http.ServeMux, on a kind that is not a name
// (see [NameLimit]), a nil handler,
// a kind that already has one, an unknown policy name, a negative timeout,
// a [WithExpiry] that is not positive, a limit out of range ([MaxRunning],
// [RateLimit]) or a [Breaker] out of its limits: these are mistakes in the
// program, not in its data.
//
// The handler starts from the kind's entry in [Options.Kinds], if any (see
// [KindOptions]), and opts are applied after it, so each of them wins over
// the field it sets: MaxRunning(3) over the entry's
// [KindOptions.MaxRunning], leaving its [KindOptions.RateLimit],
// [KindOptions.ExpireAfter] and [KindOptions.Breaker] in force; a
// [WithBreaker] replaces the entry's Breaker as a whole.
func (q *Queue) Handle(kind string, h Handler, opts ...HandlerOption) {
	mustBeKind("Handle", kind)
	if h == nil {
		panic(fmt.Sprintf("litequeue: Handle(%q) with a nil handler", kind))
	}
	hd := &handler{fn: h}
	for _, o := range append(q.opts.Kinds[kind].options(), opts...) {
		o(hd)
	}
	policy, err := q.opts.policy(hd.policyName)
	if err != nil {
		panic(fmt.Sprintf("litequeue: Handle(%q): %v", kind, err))
	}
	hd.policy = policy
	hd.fn = compose(h, hd.middleware)
	if hd.timeout < 0 {
		panic(fmt.Sprintf("litequeue: Handle(%q): negative timeout %v", kind, hd.timeout))
	}
	if err := hd.resolve(); err != nil {
		panic(fmt.Sprintf("litequeue: Handle(%q): %s", kind, hd.optionError(err)))
	}
	if !q.reg.add(kind, hd) {
		panic(fmt.Sprintf("litequeue: Handle(%q) twice", kind))
	}
	q.wake.fire() // idle Work loops look again, now for this kind too
}

// Use adds middleware that wraps every handler of the [Queue], those
// registered before the call too, from their next run on: cross-cutting
// code such as tracing, logging and metrics. Each middleware is given the
// next [Handler] and returns one that runs in its place; it sees the run's
// ctx (the handler's, with its deadline and cancellation) and [*Job], may
// pass on another ctx, and gets what the handler returns, so it can
// observe the outcome and the duration. The run records what the
// outermost middleware returns. A handler's panic passes up through the
// middleware as a panic (their deferred calls run) and is recorded as
// panicked; a run past its timeout is recorded as timed_out at once,
// whatever the middleware returns later.
//
// Order: middleware given to Use wraps that given to [WithMiddleware], and
// within each, the first given is the outermost. After Use(a, b), Use(c)
// and [Queue.Handle](kind, h, WithMiddleware(d)), a run calls
// a(b(c(d(h)))): a sees the run start first and end last. Each middleware
// is applied to a handler once, at the handler's first run after the Use
// that added it. Use is safe to call while runs are in progress; it panics
// on a nil middleware.
func (q *Queue) Use(mw ...func(Handler) Handler) {
	checkMiddleware("Use", mw)
	q.reg.use(mw...)
}

// UseEnqueue adds middleware that wraps the making of every job of the
// [Queue]: by [Queue.Enqueue], [Queue.EnqueueTx], [Queue.EnqueueMany] (once
// per job of the batch), a [Queue.Periodic] slot, and so by the methods of
// a [Kind] too; not by [Queue.Replay] and [Queue.RunNow], which run again a
// job that exists. Each middleware is given the next [Enqueuer] and
// returns one that runs in its place, with the call's ctx and the
// [NewJob], after the call's arguments were checked and before anything is
// stored: it may add, change and delete the job's metadata, replace its
// payload, and refuse it by returning an error without calling next. The
// call then returns that error, wrapped, and stores nothing: of a batch,
// no job. The payload and metadata the innermost middleware passes on are
// stored, held to [Options.MaxPayload] and the bounds of [Metadata] again;
// a middleware that returns nil without calling next is refused so too.
// A job whose [UniqueKey] a live job holds passes through the middleware,
// though the call then returns that job, marked [Job.Duplicate].
// A periodic slot's job passes through the middleware of each process
// that fires it, though only one stores it; a slot refused is an error of
// [Queue.RunDue] and [Queue.Work], which tries it again.
//
// Order: middleware given to [Options.EnqueueMiddleware] wraps that given
// to UseEnqueue, and within each, the first given is the outermost, as
// with [Queue.Use]. A call made after UseEnqueue passes through the
// middleware it added. UseEnqueue is safe to call while jobs are enqueued;
// it panics on a nil middleware.
func (q *Queue) UseEnqueue(mw ...func(Enqueuer) Enqueuer) {
	if err := checkEnqueueMiddleware("UseEnqueue", mw); err != nil {
		panic("litequeue: " + err.Error())
	}
	q.enq.mw.use(mw...)
}
