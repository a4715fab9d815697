// Package backend joins litequeue's backends in packages of their own to
// the Queue: package postgres opens a *litequeue.Queue on the server's
// engine (store/postgres) through OpenQueue, so that a program that uses
// only the file links neither the server's engine nor a PostgreSQL
// driver.
package backend

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/litequeue/litequeue/internal/store"
)

// Postgres is what package postgres gives the Queue: the pool, and what
// only the driver can do.
type Postgres struct {
	// DB is the pool, on a pgx connection (github.com/jackc/pgx/v5/stdlib).
	DB *sql.DB
	// Own reports that the Queue opened DB and closes it at its Close.
	Own bool
	// Existing refuses a database without litequeue's tables, rather
	// than create them.
	Existing bool
	// Listen opens a connection that listens on the channel.
	Listen func(ctx context.Context, channel string) (Listener, error)
	// Lost reports whether err says that the connection it came from is
	// gone (the server closed it, the network failed).
	Lost func(err error) bool
	// Script runs the statements of script, which take no parameters,
	// in one round trip on driverConn, a connection of DB's driver (see
	// sql.Conn.Raw), and returns the first column of the first row of
	// the last statement's result ("" for none); nil: the engine sends
	// one statement at a time.
	Script func(ctx context.Context, driverConn any, script string) (string, error)
}

// A Listener waits for notifications on the channel it listens on.
type Listener interface {
	// Wait returns nil when a notification came, or an error when ctx is
	// done or the connection is lost.
	Wait(ctx context.Context) error
	Close() error
}

// OpenQueue is set by package litequeue: it opens a *litequeue.Queue
// (returned as any) with opts, a litequeue.Options, within ctx, on the
// engine that open returns once opts are checked; open is given the
// Queue's logger.
var OpenQueue func(ctx context.Context, opts any, open func(logger *slog.Logger) (store.Engine, error)) (any, error)
