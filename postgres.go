package litequeue

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue/internal/backend"
)

// pgEngine is the engine of a Queue on a PostgreSQL server (see engine),
// opened by package postgres through backend.OpenPostgres. Writers of
// many processes on many machines run side by side: row locks order
// them, not a file lock. A claim takes its rows FOR UPDATE SKIP LOCKED,
// so that two claimers never wait for each other nor take the same job;
// every other read that the same transaction then writes takes its rows
// FOR UPDATE (see dialect); a unique key is inserted ON CONFLICT DO
// NOTHING. Idle workers wake on LISTEN: a trigger notifies at the commit
// of every write that leaves a job pending (schema_postgres.sql), on the
// channel of the tables' schema (pgChannel).
type pgEngine struct {
	db     *sqlx.DB
	pg     backend.Postgres
	wakeOn string // the channel of the wake-ups (pgChannel)
	logger *slog.Logger
}

//go:embed schema_postgres.sql
var pgSchemaSQL string

// pgSchemaVersion is the version of schema_postgres.sql, kept in
// litequeue_meta.
const pgSchemaVersion = 4 // 3: litequeue_jobs_stopped replaced litequeue_jobs_list; 4: a channel per schema, litequeue_copied

// pgVersionSQL reads the version of litequeue's tables.
const pgVersionSQL = `SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`

// onServer reports whether the Queue is on a server, not in a file.
func (q *Queue) onServer() bool {
	_, ok := q.eng.(*pgEngine)
	return ok
}

func init() {
	backend.OpenPostgres = func(ctx context.Context, pg backend.Postgres, opts any) (any, error) {
		return openPostgres(ctx, pg, opts.(Options))
	}
}

// openPostgres opens a Queue on the server behind pg.DB, creating or
// upgrading litequeue's tables in the schema of the connections'
// search_path.
func openPostgres(ctx context.Context, pg backend.Postgres, opts Options) (_ *Queue, err error) {
	if opts, err = opts.resolve(); err != nil {
		return nil, err
	}
	db := sqlx.NewDb(pg.DB, "pgx")
	eng := &pgEngine{db: db, pg: pg, logger: opts.Logger}
	if eng.wakeOn, err = migratePostgres(ctx, db, pg.Existing); err != nil {
		return nil, err
	}
	q := newQueue("", opts)
	d := new(dialect)
	q.eng, q.dialect, q.jobs, q.flow = eng, d, jobColumns, true
	q.db = &dbPool{DB: db, d: d, lost: eng.lost}
	q.app, q.wdb = db, db
	q.skew = newClockCheck(opts, eng.now)
	if err := q.skew.check(ctx, q.db); err != nil && !errors.As(err, new(*ClockSkewError)) {
		return nil, err // a skew is logged, and refuses claims, not Open
	}
	if err := q.openWriter(ctx, eng); err != nil {
		return nil, err
	}
	return q, nil
}

// sqlState is the SQLSTATE of a server's error, or "".
func sqlState(err error) string {
	var e interface{ SQLState() string }
	if errors.As(err, &e) {
		return e.SQLState()
	}
	return ""
}

func (e *pgEngine) lock() error { return nil }
func (e *pgEngine) unlock()     {}

func (e *pgEngine) begin(c *stmtConn, durable bool) error {
	if err := c.exec(`BEGIN`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return nil
}

// pgXactSQL names the transaction that is about to commit, if it wrote:
// should the connection be lost during its COMMIT, pgXactStatusSQL tells,
// once the server is back, whether the COMMIT took effect.
const (
	pgXactSQL       = `SELECT CAST(pg_current_xact_id_if_assigned() AS text)`
	pgXactStatusSQL = `SELECT pg_xact_status(CAST(? AS xid8))`
)

func (e *pgEngine) commit(c *stmtConn) error {
	var xid sql.NullString
	if err := c.GetContext(context.Background(), &xid, pgXactSQL); err != nil {
		return err // before the COMMIT: the transaction rolls back
	}
	err := c.exec(`COMMIT`)
	switch {
	case err == nil:
		return nil
	case !e.lost(err):
		return fmt.Errorf("%w: %w", errCommit, err)
	case !xid.Valid:
		return err // it wrote nothing: as good as rolled back
	}
	return &commitLost{err: err, ask: func(ctx context.Context) (string, error) {
		var status sql.NullString
		err := e.db.GetContext(ctx, &status, e.db.Rebind(pgXactStatusSQL), xid.String)
		return status.String, err
	}}
}

// pgNowSQL reads the server's clock, in microseconds: clock_timestamp, not
// now, which is when the transaction began.
const pgNowSQL = `SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS bigint)`

// now reads the server's clock in tx, for the check of the Queue's clock
// (see clockCheck).
func (e *pgEngine) now(ctx context.Context, tx execer) (time.Time, error) {
	var us int64
	if err := tx.GetContext(ctx, &us, pgNowSQL); err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(us), nil
}

// pgClaimSQL takes, in claim order, due jobs that no other transaction
// holds; a NULL list of queues is every queue.
const pgClaimSQL = `SELECT ` + jobColumns + ` FROM litequeue_jobs
	WHERE state = 'pending' AND run_at <= ? AND (expires_at IS NULL OR expires_at > ?)
	  AND kind = ANY(?::text[]) AND (?::text[] IS NULL OR queue = ANY(?::text[]))
	  AND NOT queue = ANY(?::text[])
	ORDER BY priority DESC, run_at, id LIMIT ? FOR UPDATE SKIP LOCKED`

// pgLeaseSQL leases every claimed row in one statement: its arrays hold,
// for each row, the values that differ from row to row.
const pgLeaseSQL = `UPDATE litequeue_jobs AS j
	SET state = 'running', attempt = l.attempt, token = l.token, lease_until = ?, started_at = ?,
	    worker = ?, max_tries = l.max_tries, retry_delay = l.retry_delay, cancel = 0
	FROM unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])
	     AS l(id, attempt, token, max_tries, retry_delay)
	WHERE j.id = l.id`

func (e *pgEngine) claim(ctx context.Context, tx execer, cq claimQuery, lease func(*jobRow) bool) error {
	var queues []string // NULL: every queue
	if len(cq.queues) > 0 {
		queues = cq.queues
	}
	paused := cq.paused
	if paused == nil {
		paused = []string{}
	}
	var rows []jobRow
	if err := tx.SelectContext(ctx, &rows, pgClaimSQL, ms(cq.now), ms(cq.now), cq.kinds, queues, queues, paused, cq.limit); err != nil {
		return err
	}
	n := len(rows)
	ids, attempts, tokens, maxTries, delays := make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	var r *jobRow // the first row taken
	for i := range rows {
		if !lease(&rows[i]) {
			continue // locked until tx ends, and left as it is
		}
		if r == nil {
			r = &rows[i]
		}
		l := &rows[i]
		ids, attempts, tokens = append(ids, l.ID), append(attempts, int64(l.Attempt)), append(tokens, l.Token)
		maxTries, delays = append(maxTries, int64(l.MaxTries)), append(delays, l.RetryDelay)
	}
	if r == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx, pgLeaseSQL, r.LeaseUntil, r.StartedAt, r.Worker, ids, attempts, tokens, maxTries, delays)
	return err
}

// addHistory adds one row per statement: the server's statements cost
// little beside their rows.
func (e *pgEngine) addHistory(ctx context.Context, tx execer, rows []*historyRow) error {
	return addHistoryEach(ctx, tx, rows)
}

// lockKind takes a lock on kind for the rest of tx: PostgreSQL's claimers
// do not take turns, so two could each count a kind's runs before either
// wrote its claim.
func (e *pgEngine) lockKind(ctx context.Context, tx execer, kind string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.litequeue.kind'), hashtext(?))`, kind)
	return err
}

// pgInsertJobsSQL adds the jobs of a batch in one statement, in the order
// of the payloads, and nothing if the batch's unique key is taken by a
// live job: a duplicate that commits meanwhile in another transaction is
// waited for, and then skipped, never an error.
const pgInsertJobsSQL = `INSERT INTO litequeue_jobs
	(queue, kind, payload, state, priority, max_tries, own_max_tries, run_at, created_at, unique_key, metadata, expires_at)
	SELECT ?::text, ?::text, p.payload, 'pending', ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::bigint, ?::text, ?::text, ?::bigint
	FROM unnest(?::bytea[]) WITH ORDINALITY AS p(payload, n) ORDER BY p.n
	ON CONFLICT (unique_key) WHERE unique_key IS NOT NULL AND state IN ('pending', 'running') DO NOTHING
	RETURNING id`

func (e *pgEngine) insertJobs(ctx context.Context, tx execer, b *enqueueBatch, runAt, now time.Time) ([]int64, error) {
	payloads := make([][]byte, len(b.payloads))
	for i, p := range b.payloads {
		payloads[i] = payloadColumn(p)
	}
	var ids []int64
	err := tx.SelectContext(ctx, &ids, pgInsertJobsSQL, b.cfg.queue, b.kind, b.cfg.priority,
		b.maxTries, b.cfg.maxTries, ms(runAt), ms(now), nullString(b.cfg.uniqueKey), b.cfg.metadata, b.expiresAt(runAt), payloads)
	if err != nil {
		return nil, err
	}
	if len(ids) != 0 && len(ids) != len(b.payloads) {
		return nil, fmt.Errorf("inserted %d jobs of %d", len(ids), len(b.payloads))
	}
	// The identity column numbers the rows in the order the SELECT gives
	// them.
	slices.Sort(ids)
	return ids, nil
}

// compact has nothing to do: the server's autovacuum gives the room of
// purged rows back.
func (e *pgEngine) compact(context.Context, func(context.Context, func(execer) error) error) error {
	return nil
}

// retry reports a serialization failure, a deadlock and a lost
// connection: the transaction rolled back, and may run again.
func (e *pgEngine) retry(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01":
		return true
	}
	return e.pg.Lost != nil && e.pg.Lost(err)
}

func (e *pgEngine) lost(err error) bool { return e.pg.Lost != nil && e.pg.Lost(err) }

func (e *pgEngine) close() error {
	if e.pg.Own {
		return e.db.Close()
	}
	return nil
}

// pgWatch tells an idle Work loop that a job may have become pending: a
// notification came on the engine's channel since the last call of changed, or the
// listening connection is down (then every look is a change, and Work
// polls every pollInterval until it is back). On each notification it
// also wakes the Work loops at once.
type pgWatch struct {
	e      *pgEngine
	wake   func()
	dirty  atomic.Bool
	up     atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
}

// relistenWait is how long the watch waits before it listens again after
// losing its connection.
const relistenWait = time.Second

// watch wakes the loop for every notification, whatever its room: taking
// one costs no read.
func (e *pgEngine) watch(wk waker) (changes, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &pgWatch{e: e, wake: wk.wake, cancel: cancel, done: make(chan struct{})}
	go w.listen(ctx)
	return w, nil
}

// listen listens on the engine's channel until ctx is done, listening again after
// each loss.
func (w *pgWatch) listen(ctx context.Context) {
	defer close(w.done)
	for ctx.Err() == nil {
		l, err := w.e.pg.Listen(ctx, w.e.wakeOn)
		if err == nil {
			w.up.Store(true)
			w.dirty.Store(true)
			w.wake() // what came while it was down
			for l.Wait(ctx) == nil {
				w.dirty.Store(true)
				w.wake()
			}
			w.up.Store(false)
			err = l.Close()
		}
		if ctx.Err() != nil {
			return
		}
		w.e.logger.Warn("litequeue: lost the connection that listens for new jobs; polling until it is back", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(relistenWait):
		}
	}
}

func (w *pgWatch) changed(context.Context) (bool, error) {
	return w.dirty.Swap(false) || !w.up.Load(), nil
}

// poll is pollInterval: Work looks that often also while notifications
// come.
func (w *pgWatch) poll() time.Duration { return pollInterval }

func (w *pgWatch) close() error {
	w.cancel()
	<-w.done
	return nil
}
