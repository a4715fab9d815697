package postgres

import (
	"cmp"
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue/internal/backend"
	"github.com/litequeue/litequeue/internal/store"
)

// Engine is the engine of a Queue on a PostgreSQL server (see engine),
// opened by package postgres through backend.OpenPostgres. Writers of
// many processes on many machines run side by side: row locks order
// them, not a file lock. A claim takes its rows FOR UPDATE SKIP LOCKED,
// so that two claimers never wait for each other nor take the same job;
// every other read that the same transaction then writes takes its rows
// FOR UPDATE (see dialect); a unique key is inserted ON CONFLICT DO
// NOTHING. Idle workers wake on LISTEN: a trigger notifies at the commit
// of every statement that leaves a job pending (schema.sql), on the channel
// of the tables' schema (pgChannel).
type Engine struct {
	db     *sqlx.DB
	pg     backend.Postgres
	wakeOn string // the channel of the wake-ups (pgChannel)
	logger *slog.Logger
}

//go:embed schema.sql
var pgSchemaSQL string

// pgSchemaVersion is the version of schema.sql, kept in
// litequeue_meta.
const pgSchemaVersion = 8 // 3: litequeue_jobs_stopped replaced litequeue_jobs_list; 4: a channel per schema, litequeue_copied; 5: litequeue_kinds; 6: a notification per statement, litequeue_policies, litequeue_throughput, litequeue_workers; 7: litequeue_outputs, litequeue_checkpoints, litequeue_progress; litequeue_jobs_pending replaced litequeue_jobs_claim and litequeue_jobs_next, without litequeue_attempts_recent; litequeue_counts; 8: dependencies (litequeue_jobs.dependents, litequeue_deps, litequeue_waits)

// VersionSQL reads the version of litequeue's tables.
const VersionSQL = `SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`

// Open opens the engine on the server behind pg.DB, creating or upgrading
// litequeue's tables in the schema of the connections' search_path
// (unless pg.Existing: then their absence is an error). logger nil: no
// logs.
func Open(ctx context.Context, pg backend.Postgres, logger *slog.Logger) (*Engine, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	db := sqlx.NewDb(pg.DB, "pgx")
	wakeOn, err := migratePostgres(ctx, db, pg.Existing)
	if err != nil {
		return nil, err
	}
	return &Engine{db: db, pg: pg, wakeOn: wakeOn, logger: logger}, nil
}

// Serial is false: the server's writers run side by side.
func (e *Engine) Serial() bool { return false }

// wakeSQL wakes every worker listening on the channel at the commit, as
// the trigger does for a job that becomes pending (schema.sql).
const wakeSQL = `SELECT pg_notify(?, '')`

// NotifyAtCommit notifies every listening Work loop, this process's
// among them, since they look again only when told: the trigger tells
// only of a job that becomes pending.
func (e *Engine) NotifyAtCommit(ctx context.Context, tx store.Execer) error {
	_, err := tx.ExecContext(ctx, wakeSQL, e.wakeOn)
	return err
}

// TellsOwn is true: a notification comes back to the listener of the
// process that sent it.
func (e *Engine) TellsOwn() bool { return true }

// Info describes the server's pool, which serves litequeue's reads, its
// writer and the app alike, and its schema, which has every column and
// table.
func (e *Engine) Info() store.Info {
	return store.Info{Reads: e.db, Writes: e.db, App: e.db, Dialect: &store.Dialect{KeepsCounts: true},
		JobColumns: store.JobColumns, Flow: true, Recorded: true, Composed: true, Dependencies: true, ServerClock: true}
}

// sqlState is the SQLSTATE of a server's error, or "".
func sqlState(err error) string {
	var e interface{ SQLState() string }
	if errors.As(err, &e) {
		return e.SQLState()
	}
	return ""
}

func (e *Engine) Lock() error { return nil }
func (e *Engine) Unlock()     {}

// Begin begins a durable batch's transaction with its commit marker and
// its ID (pgBeginXactSQL), and a light one with a plain BEGIN: a
// transaction with an ID flushes the server's log at its COMMIT even when
// it wrote nothing, as a claim that finds no job does.
func (e *Engine) Begin(c *store.Conn, durable bool) error {
	c.Xact = ""
	if durable && e.pg.Script != nil {
		return e.beginXact(c)
	}
	if err := c.Exec(`BEGIN`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return nil
}

// pgBeginXactSQL begins a durable batch's transaction, writes its commit
// marker (%d, a random number) and reads its ID, in one round trip (see
// Commit).
const pgBeginXactSQL = `BEGIN; INSERT INTO litequeue_commits (token) VALUES (%d); SELECT CAST(pg_current_xact_id() AS text) || ' ' || '%d'`

// beginXact begins the transaction on c with its marker and its ID
// (pgBeginXactSQL), and keeps both in c.Xact.
func (e *Engine) beginXact(c *store.Conn) error {
	token := rand.Int64N(math.MaxInt64) + 1
	err := c.Raw(func(dc any) (err error) {
		c.Xact, err = e.pg.Script(context.Background(), dc, fmt.Sprintf(pgBeginXactSQL, token, token))
		return err
	})
	if err != nil || c.Xact == "" {
		c.Rollback() // in case the BEGIN took effect
		return fmt.Errorf("begin: %w", cmp.Or(err, errors.New("no transaction ID")))
	}
	return nil
}

// pgXactSQL names the transaction that is about to commit, if it wrote:
// should the connection be lost during its COMMIT, pgXactStatusSQL tells,
// once the server is back, whether the COMMIT took effect.
//
// pg_xact_status of the transaction's ID alone would tell wrongly after a
// crash of the server (a restart, or a backend's crash, after which the
// server recovers in place). An ID reaches the server's log with the
// transaction's first change, and the log is flushed at the latest by its
// COMMIT; if the server crashed before the log of a transaction whose
// COMMIT was cut off was flushed, it knows nothing of that ID once
// recovered and gives it again, to a new transaction, whose status it
// then tells: "committed" of a COMMIT that never took effect, an enqueue
// acknowledged and lost. So a durable batch writes a marker of its own
// in its transaction (litequeue_commits, pgBeginXactSQL), which is there
// if and only if it committed. Of its ID, only "in progress" is asked, to
// wait for a COMMIT that may still take effect: a new transaction given
// the ID again is waited for too, harmlessly. A light batch (a claim, a
// renewal: see store.Op.Light) has no marker: "aborted", and an ID not
// given yet (at or past the one the ask is given), say it did not commit,
// which an ID given again cannot make wrong (it is given again only if the
// first never reached the log); "committed" is "unknown"
// (ErrCommitUnknown): a claim of unknown outcome leaves its jobs to come
// back when their leases expire.
const (
	pgXactSQL       = `SELECT CAST(pg_current_xact_id_if_assigned() AS text)`
	pgXactStatusSQL = `SELECT CASE
		WHEN token <> 0 AND EXISTS (SELECT 1 FROM litequeue_commits AS c WHERE c.token = t.token) THEN 'committed'
		WHEN x >= pg_current_xact_id() THEN 'aborted'
		WHEN pg_xact_status(x) = 'in progress' THEN 'in progress'
		WHEN token <> 0 OR pg_xact_status(x) = 'aborted' THEN 'aborted'
		ELSE 'unknown' END
	FROM (SELECT CAST(? AS bigint) AS token, CAST(? AS xid8) AS x) AS t`
)

// xactStatus tells, on db, whether the transaction that xact names (its
// ID, and its marker if it wrote one: see pgBeginXactSQL) committed:
// "committed", "aborted", "in progress" or "unknown" (see pgXactSQL).
func xactStatus(ctx context.Context, db *sqlx.DB, xact string) (string, error) {
	xid, marker, _ := strings.Cut(xact, " ")
	token, err := strconv.ParseInt(cmp.Or(marker, "0"), 10, 64)
	if err != nil {
		return "", fmt.Errorf("transaction %q: %w", xact, err)
	}
	var status sql.NullString
	err = db.GetContext(ctx, &status, db.Rebind(pgXactStatusSQL), token, xid)
	return status.String, err
}

// pgCommitsKept is how long a commit marker is kept: far longer than a
// write waits for the server to tell it (store.ServerRetry).
const pgCommitsKept = `1 hour`

// Commit commits, knowing the transaction's ID first, from its BEGIN or
// read now: if the connection is lost during the COMMIT, the server tells
// later whether it took effect (a *store.CommitLost).
func (e *Engine) Commit(c *store.Conn) error {
	xid := sql.NullString{String: c.Xact, Valid: c.Xact != ""}
	if !xid.Valid {
		if err := c.GetContext(context.Background(), &xid, pgXactSQL); err != nil {
			return err // before the COMMIT: the transaction rolls back
		}
	}
	err := c.Exec(`COMMIT`)
	switch {
	case err == nil:
		return nil
	case !e.Lost(err):
		return fmt.Errorf("%w: %w", store.ErrCommit, err)
	case !xid.Valid:
		return err // it wrote nothing: as good as rolled back
	}
	return &store.CommitLost{Err: err, Ask: func(ctx context.Context) (string, error) {
		return xactStatus(ctx, e.db, xid.String)
	}}
}

// pgNowSQL reads the server's clock, in microseconds: clock_timestamp, not
// now, which is when the transaction began.
const pgNowSQL = `SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS bigint)`

// ServerNow reads the server's clock in ex, for the check of the Queue's
// clock against it.
func (e *Engine) ServerNow(ctx context.Context, ex store.Execer) (time.Time, error) {
	var us int64
	if err := ex.GetContext(ctx, &us, pgNowSQL); err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(us), nil
}

// pgClaimSQL takes, in claim order, due jobs that no other transaction
// holds; a NULL list of queues is every queue. It reads
// litequeue_jobs_pending (kind, priority DESC, run_at, id) alone: for
// each kind, pr walks its priorities, one probe each, and of each kind
// and priority the due jobs are a range of the index, read in order up to
// the limit; the outer ORDER BY sorts those rows only. Its work is
// bounded by the limit times the kinds and their priorities, not by the
// jobs pending, due or not, also on a table the server has no statistics
// of yet — but for a queue filter or paused queues, which step over the
// kind's due jobs of other queues (the queue is not in the index). A probe locks the rows it reads: of a claim of several kinds or
// priorities, those it does not take stay locked, and skipped by other
// claims, until it commits.
const pgClaimSQL = `SELECT ` + store.JobColumns + ` FROM unnest(?::text[]) AS k(name)
	CROSS JOIN LATERAL (WITH RECURSIVE p(v) AS (
		SELECT (SELECT priority FROM litequeue_jobs WHERE state = 'pending' AND kind = k.name
			ORDER BY priority DESC LIMIT 1)
		UNION ALL
		SELECT (SELECT priority FROM litequeue_jobs WHERE state = 'pending' AND kind = k.name AND priority < p.v
			ORDER BY priority DESC LIMIT 1) FROM p WHERE p.v IS NOT NULL)
		SELECT v FROM p WHERE v IS NOT NULL) AS pr
	CROSS JOIN LATERAL (SELECT ` + store.JobColumns + ` FROM litequeue_jobs
		WHERE state = 'pending' AND kind = k.name AND priority = pr.v AND run_at <= ?
		  AND (expires_at IS NULL OR expires_at > ?)
		  AND (?::text[] IS NULL OR queue = ANY(?::text[])) AND NOT queue = ANY(?::text[])
		ORDER BY run_at, id LIMIT ? FOR UPDATE SKIP LOCKED) AS j
	ORDER BY priority DESC, run_at, id LIMIT ?`

// pgLeaseSQL leases every claimed row in one statement: its arrays hold,
// for each row, the values that differ from row to row. It returns the
// checkpoints of the jobs it leased that have one, in the same round trip.
const pgLeaseSQL = `WITH leased AS (UPDATE litequeue_jobs AS j
	SET state = 'running', attempt = l.attempt, token = l.token, lease_until = ?, started_at = ?,
	    worker = ?, max_tries = l.max_tries, retry_delay = l.retry_delay, cancel = 0
	FROM unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])
	     AS l(id, attempt, token, max_tries, retry_delay)
	WHERE j.id = l.id RETURNING j.id)
	SELECT c.job_id, c.checkpoint FROM litequeue_checkpoints AS c JOIN leased ON c.job_id = leased.id`

func (e *Engine) Claim(ctx context.Context, tx store.Execer, cq store.ClaimQuery, lease func(*store.JobRow) bool) (map[int64][]byte, error) {
	var queues []string // NULL: every queue
	if len(cq.Queues) > 0 {
		queues = cq.Queues
	}
	paused := cq.Paused
	if paused == nil {
		paused = []string{}
	}
	var rows []store.JobRow
	if err := tx.SelectContext(ctx, &rows, pgClaimSQL, cq.Kinds, store.MS(cq.Now), store.MS(cq.Now), queues, queues, paused, cq.Limit, cq.Limit); err != nil {
		return nil, err
	}
	n := len(rows)
	ids, attempts, tokens, maxTries, delays := make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
	var r *store.JobRow // the first row taken
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
		return nil, nil
	}
	var saved []store.SavedCheckpoint
	if err := tx.SelectContext(ctx, &saved, pgLeaseSQL, r.LeaseUntil, r.StartedAt, r.Worker, ids, attempts, tokens, maxTries, delays); err != nil {
		return nil, err
	}
	return store.CheckpointsByID(saved), nil
}

// LockKey takes an advisory lock on key in space, of the tables' schema,
// for the rest of tx: PostgreSQL's writers do not take turns, so two
// claims could each count a kind's runs before either wrote its claim,
// and two copies each miss the other's record. A key is a lock of two
// int4 halves (the space's hash, the key's); the empty key is the
// space's one bigint lock, as copies have taken it from the first, so
// that a process of an older release excludes a newer one.
func (e *Engine) LockKey(ctx context.Context, tx store.Execer, space, key string) error {
	if key == "" {
		_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.litequeue.' || ?))`, space)
		return err
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.litequeue.' || ?), hashtext(?))`, space, key)
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

func (e *Engine) InsertJobs(ctx context.Context, tx store.Execer, j *store.NewJobs) ([]int64, error) {
	payloads := make([][]byte, len(j.Payloads))
	for i, p := range j.Payloads {
		payloads[i] = store.PayloadColumn(p)
	}
	var ids []int64
	err := tx.SelectContext(ctx, &ids, pgInsertJobsSQL, j.Queue, j.Kind, j.Priority,
		j.MaxTries, j.OwnMaxTries, j.RunAt, j.CreatedAt, store.NullString(j.UniqueKey), j.Metadata, j.ExpiresAt, payloads)
	if err != nil {
		return nil, err
	}
	if len(ids) != 0 && len(ids) != len(j.Payloads) {
		return nil, fmt.Errorf("inserted %d jobs of %d", len(ids), len(j.Payloads))
	}
	// The identity column numbers the rows in the order the SELECT gives
	// them.
	slices.Sort(ids)
	return ids, nil
}

// Compact deletes the commit markers older than pgCommitsKept (see
// pgXactSQL), by the server's clock, in a transaction of write; the
// server's autovacuum gives the room of purged rows back.
func (e *Engine) Compact(ctx context.Context, write func(context.Context, func(store.Execer) error) error) error {
	return write(ctx, func(tx store.Execer) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM litequeue_commits WHERE created < now() - interval '`+pgCommitsKept+`'`)
		return err
	})
}

// Health reads the schema version of litequeue's tables: the rest of a
// report is a file's, and the server checks its own pages.
func (e *Engine) Health(ctx context.Context) (*store.Health, error) {
	h := &store.Health{ReadProblems: []string{}, Warnings: []string{}}
	if err := e.db.GetContext(ctx, &h.SchemaVersion, VersionSQL); err != nil {
		h.ReadProblems = append(h.ReadProblems, fmt.Sprintf("no schema version: %v", err))
	}
	return h, nil
}

// errNoFile is Backup's refusal: a server has no file to copy.
var errNoFile = errors.New("a Queue on a server has no file to copy: back the server up with its own tools (pg_dump)")

// Backup refuses: a Queue on a server has no file to copy, and the
// server's own tools (pg_dump, its replicas) back it up.
func (e *Engine) Backup(context.Context, string, bool) error { return errNoFile }

// Retry reports a serialization failure, a deadlock and a lost
// connection: the transaction rolled back, and may run again.
func (e *Engine) Retry(err error) bool {
	switch sqlState(err) {
	case "40001", "40P01":
		return true
	}
	return e.pg.Lost != nil && e.pg.Lost(err)
}

func (e *Engine) Lost(err error) bool { return e.pg.Lost != nil && e.pg.Lost(err) }

func (e *Engine) Close() error {
	if e.pg.Own {
		return e.db.Close()
	}
	return nil
}

// pgWatch tells an idle Work loop that a job may have become pending: a
// notification came on the engine's channel since the last call of changed, or the
// listening connection is down (then every look is a change, and Work
// polls every store.PollInterval until it is back). On each notification it
// also wakes the Work loops at once.
type pgWatch struct {
	e      *Engine
	wake   func()
	dirty  atomic.Bool
	up     atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
}

// relistenWait is how long the watch waits before it listens again after
// losing its connection.
const relistenWait = time.Second

// Watch wakes the loop for every notification, whatever its room: taking
// one costs no read.
func (e *Engine) Watch(wk store.Waker) (store.Changes, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &pgWatch{e: e, wake: wk.Wake, cancel: cancel, done: make(chan struct{})}
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

func (w *pgWatch) Changed(context.Context) (bool, error) {
	return w.dirty.Swap(false) || !w.up.Load(), nil
}

// Poll is store.PollInterval: Work looks that often also while notifications
// come.
func (w *pgWatch) Poll() time.Duration { return store.PollInterval }

func (w *pgWatch) Close() error {
	w.cancel()
	<-w.done
	return nil
}
