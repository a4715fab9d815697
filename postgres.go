package litequeue

import (
	"context"
	"crypto/md5"
	"database/sql/driver"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
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

// A pgStep takes tables of version v to v+1 (pgSteps[v]) where running the
// whole of schema_postgres.sql again would lock more than the change
// needs: its ALTER TABLEs take the jobs table's ACCESS EXCLUSIVE lock, and
// each CREATE INDEX a SHARE lock, which stops every write to the table for
// the whole build; in one transaction both are held until it commits. A
// step runs the schema's own statements for its change, named by how they
// begin: those of tx in one transaction, then, outside any (where they
// must run), it builds each index of indexes with CREATE INDEX
// CONCURRENTLY, whose lock lets writes go on, and drops each index of drop
// with DROP INDEX CONCURRENTLY. Every statement can run again, so a step
// cut short is done again whole at the next Open: the version is written
// once every step is done.
type pgStep struct {
	tx      []string // "CREATE TABLE IF NOT EXISTS litequeue_copied"
	indexes []string // "CREATE INDEX IF NOT EXISTS litequeue_jobs_stopped"
	drop    []string // index names
}

var pgSteps = map[int]pgStep{
	// Version 3's index is built before the one it replaces is dropped.
	2: {indexes: []string{"CREATE INDEX IF NOT EXISTS litequeue_jobs_stopped"}, drop: []string{"litequeue_jobs_list"}},
	// The trigger calls the function by its identity, which CREATE OR
	// REPLACE keeps: the trigger itself, and its table, are not touched.
	// Processes of an older binary still at work listen on the channel
	// litequeue, which nothing notifies any more: they find new jobs at
	// their poll, each second, until they are upgraded too.
	3: {tx: []string{"CREATE OR REPLACE FUNCTION litequeue_notify()", "CREATE TABLE IF NOT EXISTS litequeue_copied"}},
}

// pgVersionSQL reads the version of litequeue's tables.
const pgVersionSQL = `SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`

// pgChannel names the channel of the wake-ups of litequeue's tables in
// schema as their trigger does (litequeue_notify in schema_postgres.sql):
// litequeue_<schema>, or, where that would pass PostgreSQL's 63 bytes for
// a name, litequeue_<the md5 of schema, in hex>. The Queues of other
// schemas in the database listen on channels of their own.
func pgChannel(schema string) string {
	if ch := "litequeue_" + schema; len(ch) <= 63 {
		return ch
	}
	sum := md5.Sum([]byte(schema))
	return "litequeue_" + hex.EncodeToString(sum[:])
}

// pgTablesSchemaSQL reads the schema of litequeue's tables: the one the
// connections' search_path finds them in, the trigger's TG_TABLE_SCHEMA.
const pgTablesSchemaSQL = `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.oid = 'litequeue_jobs'::regclass`

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
	q.db = &dbPool{DB: db, d: d}
	q.app, q.wdb = db, db
	if err := q.openWriter(ctx, eng); err != nil {
		return nil, err
	}
	return q, nil
}

// migratePostgres creates litequeue's tables (unless existing: then their
// absence is an error) or upgrades them, and returns the channel of their
// wake-ups (pgChannel). Tables of this binary's version are only read: CREATE INDEX IF NOT EXISTS and CREATE OR REPLACE TRIGGER
// lock the table even when there is nothing to create, which would stall,
// or deadlock with, the writers of the processes at work (unlike the
// file's, a change to schema_postgres.sql takes a new version). Otherwise
// it works under the migration's lock (pgLockMigration), so that of
// several processes that open at once one creates or upgrades the tables
// and the others find them done.
func migratePostgres(ctx context.Context, db *sqlx.DB, existing bool) (channel string, err error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return "", fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	version, err := pgCheckVersion(ctx, conn, existing)
	if err == nil && version < pgSchemaVersion {
		err = pgMigrate(ctx, conn, existing)
	}
	if err != nil {
		return "", err
	}
	var schema string
	if err := conn.GetContext(ctx, &schema, pgTablesSchemaSQL); err != nil {
		return "", fmt.Errorf("read the schema of litequeue's tables: %w", err)
	}
	return pgChannel(schema), nil
}

// pgCheckVersion returns the version of litequeue's tables, 0 for none,
// and refuses tables newer than this binary's, and none if existing.
func pgCheckVersion(ctx context.Context, conn *sqlx.Conn, existing bool) (int, error) {
	var present bool
	if err := conn.GetContext(ctx, &present, `SELECT to_regclass('litequeue_meta') IS NOT NULL`); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	if !present && existing {
		return 0, errors.New("no litequeue tables in the schema of the connections' search_path")
	}
	if !present {
		return 0, nil
	}
	var version int
	if err := conn.GetContext(ctx, &version, pgVersionSQL); err != nil && !errors.Is(err, errNoRows) {
		return 0, fmt.Errorf("migrate: read schema version: %w", err)
	}
	if version > pgSchemaVersion {
		return 0, fmt.Errorf("litequeue schema version %d is newer than this binary's %d: upgrade litequeue", version, pgSchemaVersion)
	}
	return version, nil
}

// pgMigrate creates or upgrades litequeue's tables under the migration's
// lock, unless another process did so while it waited for the lock. New
// tables, or those of version 1, which has no step, are made by the whole
// schema in one transaction.
func pgMigrate(ctx context.Context, conn *sqlx.Conn, existing bool) (err error) {
	unlock, err := pgLockMigration(ctx, conn)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, unlock()) }()
	version, err := pgCheckVersion(ctx, conn, existing)
	if err != nil || version == pgSchemaVersion {
		return err
	}
	if _, ok := pgSteps[version]; !ok {
		return pgInTx(ctx, conn, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, pgSchemaSQL); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
			return pgRecordVersion(ctx, tx)
		})
	}
	for v := version; v < pgSchemaVersion; v++ {
		if err := pgSteps[v].run(ctx, conn); err != nil {
			return fmt.Errorf("migrate: upgrade version %d: %w", v, err)
		}
	}
	return pgInTx(ctx, conn, func(tx *sqlx.Tx) error { return pgRecordVersion(ctx, tx) })
}

// pgMigrationLock is the key of the migration's lock: one per schema.
const pgMigrationLock = `hashtext(current_schema() || '.litequeue')`

// pgLockMigration takes the migration's lock on conn, waiting while
// another session holds it, and returns the func that releases it. The
// lock is the session's, held across the transactions and index builds of
// an upgrade. It waits by asking again, not in pg_advisory_lock: a
// session that waits inside a statement holds a snapshot, and the
// holder's CREATE INDEX CONCURRENTLY waits for every older snapshot to go
// (a deadlock, which the server ends by failing one of them). Where the
// lock cannot be released, the connection is closed, which releases it.
func pgLockMigration(ctx context.Context, conn *sqlx.Conn) (unlock func() error, err error) {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var ok bool
		if err := conn.GetContext(ctx, &ok, `SELECT pg_try_advisory_lock(`+pgMigrationLock+`)`); err != nil {
			return nil, fmt.Errorf("migrate: lock: %w", err)
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("migrate: wait for another process's migration: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
	return func() error {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+pgMigrationLock+`)`); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
			return fmt.Errorf("migrate: unlock: %w", err)
		}
		return nil
	}, nil
}

// run runs the step on conn.
func (s pgStep) run(ctx context.Context, conn *sqlx.Conn) error {
	if len(s.tx) > 0 {
		err := pgInTx(ctx, conn, func(tx *sqlx.Tx) error {
			for _, head := range s.tx {
				if _, err := tx.ExecContext(ctx, pgStatement(head)); err != nil {
					return fmt.Errorf("%s: %w", head, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, head := range s.indexes {
		if err := pgBuildIndex(ctx, conn, head); err != nil {
			return err
		}
	}
	for _, name := range s.drop {
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return fmt.Errorf("drop index %s: %w", name, err)
		}
	}
	return nil
}

// pgBuildIndex builds the schema's index that its statement head
// creates, with CREATE INDEX CONCURRENTLY: it scans the table twice and
// waits for the transactions that began before it, while writes go on. A
// concurrent build cut short (a crash, a cancel) leaves an INVALID index
// of the name, which the server updates at every write and never reads,
// and which IF NOT EXISTS would keep: such an index is dropped first.
func pgBuildIndex(ctx context.Context, conn *sqlx.Conn, head string) error {
	name := head[strings.LastIndexByte(head, ' ')+1:]
	var valid bool
	err := conn.GetContext(ctx, &valid, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, name)
	switch {
	case errors.Is(err, errNoRows): // not there yet
	case err != nil:
		return fmt.Errorf("index %s: %w", name, err)
	case !valid:
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return fmt.Errorf("drop the invalid index %s: %w", name, err)
		}
	}
	stmt := strings.Replace(pgStatement(head), "INDEX IF NOT EXISTS", "INDEX CONCURRENTLY IF NOT EXISTS", 1)
	if _, err := conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	return nil
}

// pgStatement returns the statement of schema_postgres.sql that begins
// with head, up to its semicolon (the one after a function's body). It
// panics if there is none: a mistake in pgSteps, which every test that
// upgrades a database finds.
func pgStatement(head string) string {
	for i := 0; ; {
		j := strings.Index(pgSchemaSQL[i:], "\n"+head)
		if j < 0 {
			panic("litequeue: schema_postgres.sql has no statement " + head)
		}
		s := pgSchemaSQL[i+j+1:]
		i += j + 1
		if next := s[len(head)]; next != ' ' && next != '\n' && next != '(' {
			continue // head is a prefix of another name
		}
		for end := 0; ; {
			k := strings.Index(s[end:], ";\n")
			if k < 0 {
				panic("litequeue: schema_postgres.sql: no end to the statement " + head)
			}
			end += k + 1
			if strings.Count(s[:end], "$$")%2 == 0 {
				return s[:end]
			}
		}
	}
}

// pgInTx runs fn in a transaction on conn.
func pgInTx(ctx context.Context, conn *sqlx.Conn, fn func(*sqlx.Tx) error) error {
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// pgRecordVersion records that the tables are of pgSchemaVersion, and
// gives the database its ID (addDatabaseID) if it has none.
func pgRecordVersion(ctx context.Context, tx *sqlx.Tx) error {
	if err := addDatabaseID(ctx, tx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO litequeue_meta (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, "schema_version", fmt.Sprint(pgSchemaVersion)); err != nil {
		return fmt.Errorf("migrate: write schema version: %w", err)
	}
	return nil
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
