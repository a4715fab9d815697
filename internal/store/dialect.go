package store

import (
	"context"
	"database/sql"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
)

// litequeue's SQL is written once, for SQLite, in the subset PostgreSQL
// also accepts, with ? placeholders. Two things SQLite needs and
// PostgreSQL refuses are written so that the other dialect can drop or
// turn them: INDEXED BY and NOT INDEXED (hints to SQLite's planner, see
// claimSQL and stateCond), and a row lock, written as the comment
// /*FOR UPDATE*/ or /*FOR UPDATE SKIP LOCKED*/ after a SELECT whose rows
// the same transaction then writes.
// SQLite has one writer at a time and ignores the comment; PostgreSQL
// runs writers side by side, and its dialect makes the comment the clause.
// SQLite's LIKE ignores case (of ASCII letters); PostgreSQL's ILIKE does.

// A Dialect turns litequeue's SQL into an engine's; the nil Dialect is
// SQLite's, which runs it as written.
type Dialect struct {
	// KeepsCounts says that the database keeps the counts of its jobs
	// (litequeue_counts) itself, by triggers on litequeue_jobs, so that
	// litequeue's statements add nothing to them (see Deltas).
	KeepsCounts bool
	cache       sync.Map // query as written → as run
}

// The parts of litequeue's SQL that PostgreSQL's dialect rewrites.
var (
	planHint = regexp.MustCompile(` INDEXED BY \w+| NOT INDEXED`)
	rowLock  = regexp.MustCompile(`/\*(FOR UPDATE(?: SKIP LOCKED)?)\*/`)
)

// SQL returns query as the engine runs it.
func (d *Dialect) SQL(query string) string {
	if d == nil {
		return query
	}
	if q, ok := d.cache.Load(query); ok {
		return q.(string)
	}
	q := planHint.ReplaceAllString(query, "")
	q = rowLock.ReplaceAllString(q, "$1")
	q = strings.ReplaceAll(q, " LIKE ", " ILIKE ") // SQLite's LIKE ignores case
	q = sqlx.Rebind(sqlx.DOLLAR, q)
	d.cache.Store(query, q)
	return q
}

// Args returns the arguments as the engine can store them. PostgreSQL's
// text holds neither a NUL byte nor invalid UTF-8, which a handler's error
// text may well have: both become U+FFFD, as they would in a UTF-8 log.
func (d *Dialect) Args(args []any) []any {
	if d == nil {
		return args
	}
	var out []any // a copy, once an argument changes: args may be the caller's
	for i, a := range args {
		switch v := a.(type) {
		case string:
			if t := StorableText(v); t != v {
				out = changed(out, args)
				out[i] = t
			}
		case sql.NullString:
			if t := StorableText(v.String); t != v.String {
				out = changed(out, args)
				out[i] = sql.NullString{String: t, Valid: v.Valid}
			}
		}
	}
	if out == nil {
		return args
	}
	return out
}

// changed returns out, or a copy of args if out is nil.
func changed(out, args []any) []any {
	if out == nil {
		out = append([]any(nil), args...)
	}
	return out
}

// StorableText is s with each NUL byte and each invalid UTF-8 sequence
// replaced by U+FFFD.
func StorableText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// LimitParam is a LIMIT whose value changes from call to call. SQLite
// plans a plain "LIMIT ?" with the value bound at the time, and so
// compiles the statement again each time the value changes: for the
// claim, whose limit is the number of free workers, that was a parse and
// plan per claim. A cast is not a plain parameter, so the plan holds for
// every value.
const LimitParam = `CAST(? AS INTEGER)`

// Pool is a database/sql pool that runs litequeue's SQL in its engine's
// dialect: litequeue's own reads. On a server its reads are tried again
// while the server is away (see again).
type Pool struct {
	*sqlx.DB
	d     *Dialect
	stmts stmtCache        // on a file, its reads, prepared once (see GetContext)
	lost  func(error) bool // the engine's Lost
}

// NewPool is db running litequeue's SQL in dialect d, for an engine whose
// Lost tells a lost connection (nil: one that never loses it).
func NewPool(db *sqlx.DB, d *Dialect, lost func(error) bool) *Pool {
	return &Pool{DB: db, d: d, lost: lost}
}

// again runs fn, a read, and runs it again while it fails because the
// server went away, as the writer does a write (see Writer.Do). dest, the
// read's destination, is emptied before each try: a read cut short may
// have filled part of it.
func (p *Pool) again(ctx context.Context, dest any, fn func() error) error {
	var o outage
	for err := fn(); ; err = fn() {
		if p.lost == nil || !p.lost(err) {
			return err
		}
		if !o.wait(ctx) {
			return o.gone(ctx, err)
		}
		if dest != nil {
			reflect.ValueOf(dest).Elem().SetZero()
		}
	}
}

func (p *Pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.DB.ExecContext(ctx, p.d.SQL(query), p.d.Args(args)...)
}

// GetContext, on a file, runs a statement the pool prepared once (stmts):
// the reads that Work makes at every look, the gate's and the due times,
// would otherwise each be parsed afresh. On a server the driver keeps a
// connection's statements itself (pgx), and a statement of database/sql
// would be one more, named, on every connection of the pool.
func (p *Pool) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	if p.d != nil {
		return p.again(ctx, dest, func() error { return p.DB.GetContext(ctx, dest, p.d.SQL(query), p.d.Args(args)...) })
	}
	return p.stmts.run(ctx, p, query, func(st *sqlx.Stmt) error { return st.GetContext(ctx, dest, args...) })
}

// SelectContext is GetContext for many rows.
func (p *Pool) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	if p.d != nil {
		return p.again(ctx, dest, func() error { return p.DB.SelectContext(ctx, dest, p.d.SQL(query), p.d.Args(args)...) })
	}
	return p.stmts.run(ctx, p, query, func(st *sqlx.Stmt) error { return st.SelectContext(ctx, dest, args...) })
}

func (p *Pool) PreparexContext(ctx context.Context, query string) (*sqlx.Stmt, error) {
	return p.DB.PreparexContext(ctx, p.d.SQL(query))
}

// Begin begins a transaction that runs litequeue's SQL in the dialect.
func (p *Pool) Begin(ctx context.Context, opts *sql.TxOptions) (*AppTx, error) {
	t, err := p.DB.BeginTxx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &AppTx{t, p.d}, nil
}

// Snapshot runs fn in a read-only transaction on the pool, which it rolls
// back when fn returns: fn's reads see one snapshot of the database and
// take no write lock (on the file, a DEFERRED BEGIN; on a server,
// REPEATABLE READ). On a server it runs
// the whole of it again while it fails because the server went away (see
// again): fn sets its results afresh each time.
func (p *Pool) Snapshot(ctx context.Context, fn func(tx Execer) error) error {
	// A file's read transaction (DEFERRED) reads one snapshot; a server's
	// needs REPEATABLE READ for that.
	opts := &sql.TxOptions{ReadOnly: true}
	if p.d != nil {
		opts.Isolation = sql.LevelRepeatableRead
	}
	once := func() error {
		tx, err := p.Begin(ctx, opts)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		return fn(tx)
	}
	if p.d == nil {
		return once()
	}
	return p.again(ctx, nil, once)
}

func (p *Pool) dialect() *Dialect { return p.d }

// CloseStmts releases the statements the pool prepared; the pool itself
// is closed by whoever opened it.
func (p *Pool) CloseStmts() error { return p.stmts.close() }

// AppTx is a transaction — litequeue's own, or the app's passed to
// EnqueueTx, SeenTx, MarkTx or CompleteTx — that runs litequeue's SQL in
// its engine's dialect.
type AppTx struct {
	*sqlx.Tx
	d *Dialect
}

// WrapTx is the app's transaction t running litequeue's SQL in dialect d.
func WrapTx(t *sqlx.Tx, d *Dialect) *AppTx { return &AppTx{t, d} }

func (t *AppTx) dialect() *Dialect { return t.d }

func (t *AppTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.d.SQL(query), t.d.Args(args)...)
}

func (t *AppTx) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.Tx.GetContext(ctx, dest, t.d.SQL(query), t.d.Args(args)...)
}

func (t *AppTx) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.Tx.SelectContext(ctx, dest, t.d.SQL(query), t.d.Args(args)...)
}

// Execer is what litequeue's SQL runs on: the writer's connection inside
// one of its transactions, a caller's transaction (EnqueueTx, MarkTx,
// CompleteTx), or, for reads, the read pool. Every path shares one piece
// of SQL.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// selectAll reads every row that query returns on db, each as a T.
func selectAll[T any](ctx context.Context, db Execer, query string, args ...any) ([]T, error) {
	var rows []T
	err := db.SelectContext(ctx, &rows, query, args...)
	return rows, err
}

// wrote reports whether the statement whose result res is changed a row.
func wrote(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
