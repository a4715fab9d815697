// Package postgres opens a litequeue Queue on a PostgreSQL server, for
// fleets whose workers outgrow one machine. The Queue is the same
// *litequeue.Queue, with the same methods and the same semantics as on a
// file; a program that imports only package litequeue links no PostgreSQL
// driver.
//
// litequeue's tables are created, at the first Open, in the schema the
// connections' search_path names first (set search_path in the DSN, e.g.
// postgres://host/db?search_path=jobs, to keep them apart: the Queues of
// one schema wake for its jobs only); processes that open a new database
// at once create them once, under an advisory lock.
// The first Open of a newer litequeue upgrades them likewise, building a
// new index of a table with CREATE INDEX CONCURRENTLY, so that the writes
// of the processes still at work go on meanwhile (the build waits for the
// transactions open on the table to end); an upgrade cut short is done
// again at the next Open.
//
// Where the server differs from the file:
//   - Writers of many processes run side by side; row locks order them
//     (claims skip the rows another claimer holds), not a file lock.
//     WriteTx is a plain transaction on DB(), taking its turn only with
//     this Queue's own writes.
//   - Idle workers wake at once on a notification that a trigger sends when
//     a statement makes jobs pending, in any session (one per statement,
//     however many jobs it wrote); while the listening connection
//     is lost they look every second, and listen again.
//   - A failed write that the server rolled back whole (a deadlock, a lost
//     connection before the commit) is run again; Work logs the loss of a
//     connection and carries on with another.
//   - When the server goes away (a restart, a failover, a lost
//     connection), the Queue's own calls — Enqueue, the reads, and Work's
//     claims, renewals and results — are tried again, with waits from
//     50ms growing to 1s, for up to litequeue.ServerRetry (10s) within
//     their context, so that an outage that short costs no error; then
//     they fail with litequeue.ErrServerGone. A write whose COMMIT was cut
//     off is not run again until the server, once back, says that the
//     COMMIT did not take effect (pg_xact_status); if it cannot say, the
//     error is also litequeue.ErrCommitUnknown. The app's own transactions
//     (EnqueueTx, MarkTx, CompleteTx, WriteTx) are the app's to try again.
//   - There is no file: OpenReadOnly, the file checks, Health's file
//     figures, the WAL, Options.Checkpoint, the vacuum and Queue.Backup
//     (which returns an error) have no counterpart, and text that
//     PostgreSQL cannot hold (a NUL byte, invalid UTF-8) is stored with
//     U+FFFD in its place.
//   - Times are milliseconds from the injected clock, as in the file, and
//     each process times the leases it takes and ends, and its purges, by
//     its own clock: the machines' clocks must agree. A Queue measures the
//     skew of its clock against the server's at Open and, while it
//     claims, at most once a minute, and logs it; past
//     Options.MaxClockSkew (by default a quarter of VisibilityTimeout,
//     which leases absorb: see the litequeue package doc) it claims,
//     rescues and purges nothing, and RunDue returns, and Work logs, a
//     *litequeue.ClockSkewError, until the clock is back within. A mock
//     clock (clock.Mock) is checked only when MaxClockSkew is set: the
//     Queues of a test share one, whatever the server's time.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/backend"
	"github.com/litequeue/litequeue/internal/store"
	pgstore "github.com/litequeue/litequeue/internal/store/postgres"
)

// Open connects to the server at dsn (a postgres:// URL or a key=value
// string, as pgx reads it) and opens the Queue there, creating
// litequeue's tables if they are missing. The Queue owns the pool and
// closes it at Close; DB returns it.
func Open(ctx context.Context, dsn string, opts litequeue.Options) (*litequeue.Queue, error) {
	return openDSN(ctx, dsn, false, opts)
}

// OpenExisting is Open for a database that already holds litequeue's
// tables, for a tool that works beside the app (the litequeue command): it
// refuses, creating nothing, a database or schema without them.
func OpenExisting(ctx context.Context, dsn string, opts litequeue.Options) (*litequeue.Queue, error) {
	return openDSN(ctx, dsn, true, opts)
}

// openDSN opens the Queue on a pool of its own on dsn, which it closes if
// the Queue does not open.
func openDSN(ctx context.Context, dsn string, existing bool, opts litequeue.Options) (*litequeue.Queue, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("litequeue: open postgres: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("litequeue: open postgres: %w", err)
	}
	q, err := open(ctx, db, backend.Postgres{DB: db, Own: true, Existing: existing}, opts)
	if err != nil {
		db.Close()
	}
	return q, err
}

// OpenDB opens the Queue on the app's *sql.DB, so that EnqueueTx, MarkTx
// and CompleteTx join the app's own transactions on it. The *sql.DB must
// use pgx's database/sql driver: sql.Open("pgx", dsn), stdlib.OpenDB, or,
// for an app that holds a *pgxpool.Pool, stdlib.OpenDBFromPool(pool); one
// of another driver is refused. The Queue holds a connection of the pool
// for its writes and one for each Work's wake-ups; it does not close the
// *sql.DB.
func OpenDB(ctx context.Context, db *sql.DB, opts litequeue.Options) (*litequeue.Queue, error) {
	if _, ok := db.Driver().(*stdlib.Driver); !ok {
		return nil, fmt.Errorf("litequeue: open postgres: the pool's driver is %T, not pgx's", db.Driver())
	}
	return open(ctx, db, backend.Postgres{DB: db}, opts)
}

func open(ctx context.Context, db *sql.DB, pg backend.Postgres, opts litequeue.Options) (*litequeue.Queue, error) {
	pg.Listen, pg.Lost, pg.Script = listen(db), lost, script
	q, err := backend.OpenQueue(ctx, opts, func(logger *slog.Logger) (store.Engine, error) {
		return pgstore.Open(ctx, pg, logger)
	})
	if err != nil {
		return nil, fmt.Errorf("litequeue: open postgres: %w", err)
	}
	return q.(*litequeue.Queue), nil
}

// listener listens on a connection of the pool, held for the purpose.
type listener struct {
	conn *sql.Conn
}

func listen(db *sql.DB) func(ctx context.Context, channel string) (backend.Listener, error) {
	return func(ctx context.Context, channel string) (backend.Listener, error) {
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := conn.ExecContext(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
			conn.Close()
			return nil, err
		}
		return &listener{conn}, nil
	}
}

// Wait waits for a notification; pgx keeps those that arrive between two
// calls.
func (l *listener) Wait(ctx context.Context) error {
	return l.conn.Raw(func(dc any) error {
		_, err := dc.(*stdlib.Conn).Conn().WaitForNotification(ctx)
		return err
	})
}

// Close ends the connection rather than return it to the pool, which
// would hand a connection still listening to the app.
func (l *listener) Close() error {
	l.conn.Raw(func(dc any) error { return driver.ErrBadConn })
	return l.conn.Close()
}

// lost reports whether err says that its connection is gone.
// script runs the statements of s in one round trip, by the simple query
// protocol, on a connection of pgx's database/sql driver, and returns the
// first column of the first row of the last one's result ("" for none).
func script(ctx context.Context, driverConn any, s string) (string, error) {
	c, ok := driverConn.(*stdlib.Conn)
	if !ok {
		return "", fmt.Errorf("a connection of pgx's database/sql driver is needed, not %T", driverConn)
	}
	results, err := c.Conn().PgConn().Exec(ctx, s).ReadAll()
	if err != nil {
		return "", err
	}
	if len(results) == 0 {
		return "", nil
	}
	if last := results[len(results)-1]; len(last.Rows) > 0 && len(last.Rows[0]) > 0 {
		return string(last.Rows[0][0]), nil
	}
	return "", nil
}

func lost(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	var pe *pgconn.PgError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.As(err, &ne), errors.As(err, &ce):
		return true
	case errors.As(err, &pe):
		// connection_exception, and the server shutting down.
		return pe.Code[:2] == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	return false
}
