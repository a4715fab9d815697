package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// stmtCache holds prepared statements by their query, for the life of the
// Queue, so that a statement run again and again is parsed and planned
// once. The writer keeps one for its connection (Conn), and the read
// pool one for its reads (Pool), where database/sql prepares a
// statement on each connection the first time it runs there, and keeps
// it. The zero value is empty and ready to use.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*cachedStmt
}

// cachedStmt is a statement of a stmtCache, with how many callers use it
// now: one that a full cache turned out is closed by the last of them
// (see done), not while another goroutine is about to run it.
type cachedStmt struct {
	*sqlx.Stmt
	users   int  // under the cache's mu
	evicted bool // out of the cache
}

// preparer is what a stmtCache prepares on: a connection or a pool.
type preparer interface {
	PreparexContext(ctx context.Context, query string) (*sqlx.Stmt, error)
}

// maxStmts bounds a statement cache: queries with (?) lists of varying
// length (bulk replay, retention) each prepare a statement of their own.
// A full cache turns every statement out and starts again.
const maxStmts = 128

// run runs fn with the statement for query, prepared on p on first use.
func (c *stmtCache) run(ctx context.Context, p preparer, query string, fn func(*sqlx.Stmt) error) error {
	s, err := c.get(ctx, p, query)
	if err != nil {
		return err
	}
	defer c.done(s)
	return fn(s.Stmt)
}

// get returns the statement for query, preparing it on p on first use
// (outside the lock: on a server that is a round trip). The caller calls
// done with it once it has run it.
func (c *stmtCache) get(ctx context.Context, p preparer, query string) (*cachedStmt, error) {
	c.mu.Lock()
	if s, ok := c.stmts[query]; ok {
		s.users++
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	st, err := p.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if s, ok := c.stmts[query]; ok { // another caller prepared it meanwhile
		s.users++
		c.mu.Unlock()
		st.Close()
		return s, nil
	}
	var evicted []*cachedStmt
	if c.stmts == nil || len(c.stmts) >= maxStmts {
		evicted = c.evictLocked()
		c.stmts = make(map[string]*cachedStmt)
	}
	s := &cachedStmt{Stmt: st, users: 1}
	c.stmts[query] = s
	c.mu.Unlock()
	closeAll(evicted)
	return s, nil
}

// done says that the caller has run s; the last user of a statement
// turned out of the cache closes it.
func (c *stmtCache) done(s *cachedStmt) {
	c.mu.Lock()
	s.users--
	last := s.users == 0 && s.evicted
	c.mu.Unlock()
	if last {
		s.Close()
	}
}

// close releases the statements.
func (c *stmtCache) close() error {
	c.mu.Lock()
	evicted := c.evictLocked()
	c.mu.Unlock()
	return closeAll(evicted)
}

// evictLocked turns every statement out of the cache, and returns those
// that no one uses now, for the caller to close once it has let go of the
// lock (on a server, each close is a round trip); done closes the others.
func (c *stmtCache) evictLocked() []*cachedStmt {
	var idle []*cachedStmt
	for q, s := range c.stmts {
		delete(c.stmts, q)
		s.evicted = true
		if s.users == 0 {
			idle = append(idle, s)
		}
	}
	return idle
}

func closeAll(stmts []*cachedStmt) error {
	var errs []error
	for _, s := range stmts {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// Conn is the writer's connection with its prepared statements, kept
// for the life of the Queue. Only the writer's leader uses it. A
// statement runs to its end whatever its caller's context says (op.run
// checks it before the write begins): the batch is shared, and a
// statement cut short would fail the others' writes with it — pgx closes
// the connection of a statement whose context is cancelled.
type Conn struct {
	db    *sqlx.DB
	conn  *sqlx.Conn
	stmts stmtCache
	d     *Dialect
	// Relaxed is the engine's to keep: the file's says that synchronous
	// is NORMAL, for a light batch, where FULL is configured. A renewed
	// connection starts unrelaxed.
	Relaxed bool
	// Xact is the engine's to keep too: the server's ID of the
	// transaction that runs, where its BEGIN read it ("": not read).
	Xact string
	// counts gathers the changes to the kept counts of the operations of
	// the batch that runs, while gathering (see Conn.gather).
	counts    Deltas
	gathering bool
	// resolved is what the batch that runs did to the dependents of the
	// jobs it ended (see Resolve).
	resolved resolvedNote
}

// NewConn takes a connection of db for the writer, running litequeue's
// SQL in dialect d.
func NewConn(ctx context.Context, db *sqlx.DB, d *Dialect) (*Conn, error) {
	conn, err := db.Connx(ctx)
	if err != nil {
		return nil, err
	}
	return &Conn{db: db, conn: conn, d: d}, nil
}

func (c *Conn) dialect() *Dialect { return c.d }

// Renew replaces a lost connection with a new one of the pool, closing
// the lost one first (it may hold the last place of a bounded pool), and
// waiting for the new one at most renewWait.
func (c *Conn) Renew() error {
	c.stmts.close()
	c.conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), renewWait)
	defer cancel()
	conn, err := c.db.Connx(ctx)
	if err != nil {
		return err // the next batch tries again
	}
	c.conn, c.Relaxed = conn, false
	return nil
}

// renewWait bounds how long the writer waits for a new connection.
const renewWait = 10 * time.Second

// Exec runs query, which takes no arguments, whatever any context says.
func (c *Conn) Exec(query string) error {
	_, err := c.ExecContext(context.Background(), query)
	return err
}

// Raw runs fn with the driver's own connection (see sql.Conn.Raw), for
// an engine that speaks its database's protocol where database/sql
// cannot: fn must not keep it.
func (c *Conn) Raw(fn func(driverConn any) error) error { return c.conn.Raw(fn) }

// Rollback ends a failed transaction. SQLite may have rolled it back
// already (after an I/O error, say), so its error is of no interest.
func (c *Conn) Rollback() { c.Exec(`ROLLBACK`) }

func (c *Conn) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	ctx = context.WithoutCancel(ctx) // see Conn
	err = c.stmts.run(ctx, c.conn, c.d.SQL(query), func(st *sqlx.Stmt) (err error) {
		res, err = st.ExecContext(ctx, c.d.Args(args)...)
		return err
	})
	return res, err
}

func (c *Conn) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	ctx = context.WithoutCancel(ctx) // see Conn
	return c.stmts.run(ctx, c.conn, c.d.SQL(query), func(st *sqlx.Stmt) error {
		return st.GetContext(ctx, dest, c.d.Args(args)...)
	})
}

func (c *Conn) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	ctx = context.WithoutCancel(ctx) // see Conn
	return c.stmts.run(ctx, c.conn, c.d.SQL(query), func(st *sqlx.Stmt) error {
		return st.SelectContext(ctx, dest, c.d.Args(args)...)
	})
}

// Close releases the statements and the connection.
func (c *Conn) Close() error {
	return errors.Join(c.stmts.close(), c.conn.Close())
}
