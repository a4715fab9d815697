package litequeue

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

// A dialect turns litequeue's SQL into an engine's; the nil dialect is
// SQLite's, which runs it as written.
type dialect struct {
	cache sync.Map // query as written → as run
}

// The parts of litequeue's SQL that PostgreSQL's dialect rewrites.
var (
	planHint = regexp.MustCompile(` INDEXED BY \w+| NOT INDEXED`)
	rowLock  = regexp.MustCompile(`/\*(FOR UPDATE(?: SKIP LOCKED)?)\*/`)
)

// sql returns query as the engine runs it.
func (d *dialect) sql(query string) string {
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

// args returns the arguments as the engine can store them. PostgreSQL's
// text holds neither a NUL byte nor invalid UTF-8, which a handler's error
// text may well have: both become U+FFFD, as they would in a UTF-8 log.
func (d *dialect) args(args []any) []any {
	if d == nil {
		return args
	}
	var out []any // a copy, once an argument changes: args may be the caller's
	for i, a := range args {
		switch v := a.(type) {
		case string:
			if t := storableText(v); t != v {
				out = changed(out, args)
				out[i] = t
			}
		case sql.NullString:
			if t := storableText(v.String); t != v.String {
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

// storableText is s with each NUL byte and each invalid UTF-8 sequence
// replaced by U+FFFD.
func storableText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// dbPool is a database/sql pool that runs litequeue's SQL in its engine's
// dialect. On a server its reads, and those of read, are tried again while
// the server is away (see outage).
type dbPool struct {
	*sqlx.DB
	d     *dialect
	stmts stmtCache        // on a file, its reads, prepared once (see GetContext)
	lost  func(error) bool // on a server, the engine's lost
}

// again runs fn, a read, and runs it again while it fails because the
// server went away, as the writer does a write (see writer.do). dest, the
// read's destination, is emptied before each try: a read cut short may
// have filled part of it.
func (p *dbPool) again(ctx context.Context, dest any, fn func() error) error {
	var o outage
	for err := fn(); ; err = fn() {
		if !p.lost(err) {
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

func (p *dbPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.DB.ExecContext(ctx, p.d.sql(query), p.d.args(args)...)
}

// GetContext, on a file, runs a statement the pool prepared once (stmts):
// the reads that Work makes at every look, the gate's and the due times,
// would otherwise each be parsed afresh. On a server the driver keeps a
// connection's statements itself (pgx), and a statement of database/sql
// would be one more, named, on every connection of the pool.
func (p *dbPool) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	if p.d != nil {
		return p.again(ctx, dest, func() error { return p.DB.GetContext(ctx, dest, p.d.sql(query), p.d.args(args)...) })
	}
	return p.stmts.run(ctx, p, query, func(st *sqlx.Stmt) error { return st.GetContext(ctx, dest, args...) })
}

// SelectContext is GetContext for many rows.
func (p *dbPool) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	if p.d != nil {
		return p.again(ctx, dest, func() error { return p.DB.SelectContext(ctx, dest, p.d.sql(query), p.d.args(args)...) })
	}
	return p.stmts.run(ctx, p, query, func(st *sqlx.Stmt) error { return st.SelectContext(ctx, dest, args...) })
}

func (p *dbPool) PreparexContext(ctx context.Context, query string) (*sqlx.Stmt, error) {
	return p.DB.PreparexContext(ctx, p.d.sql(query))
}

// begin begins a transaction that runs litequeue's SQL in the dialect.
func (p *dbPool) begin(ctx context.Context, opts *sql.TxOptions) (*dbTx, error) {
	t, err := p.DB.BeginTxx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &dbTx{t, p.d}, nil
}

// read runs fn in a transaction begun with opts, and rolls it back. On a
// server it runs the whole of it again while it fails because the server
// went away (see again): fn sets its results afresh each time.
func (p *dbPool) read(ctx context.Context, opts *sql.TxOptions, fn func(tx execer) error) error {
	once := func() error {
		tx, err := p.begin(ctx, opts)
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

// dbTx is a transaction — litequeue's own, or the app's passed to EnqueueTx,
// SeenTx, MarkTx or CompleteTx — that runs litequeue's SQL in its
// engine's dialect.
type dbTx struct {
	*sqlx.Tx
	d *dialect
}

func (t *dbTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.Tx.ExecContext(ctx, t.d.sql(query), t.d.args(args)...)
}

func (t *dbTx) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.Tx.GetContext(ctx, dest, t.d.sql(query), t.d.args(args)...)
}

func (t *dbTx) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return t.Tx.SelectContext(ctx, dest, t.d.sql(query), t.d.args(args)...)
}

// execer is what litequeue's SQL runs on: the writer's connection inside
// one of its transactions, a caller's *sqlx.Tx (EnqueueTx, MarkTx,
// CompleteTx), or, for reads, the read pool (dbPool). Every path shares
// one piece of SQL.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}
