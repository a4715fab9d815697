package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

// dbPath returns the database the command works on.
func (c *cli) dbPath() string {
	if c.db != "" {
		return c.db
	}
	if p := c.getenv("LITEQUEUE_DB"); p != "" {
		return p
	}
	return defaultDB
}

// options returns the Options of --config, or the defaults. A config file
// with errors is a usage error.
func (c *cli) options() (litequeue.Options, error) {
	var opts litequeue.Options
	if c.config != "" {
		var err error
		if opts, err = litequeue.LoadConfig(c.config); err != nil {
			return opts, &exitError{code: exitUsage, err: fmt.Errorf("config: %w", err)}
		}
	}
	opts.Clock = c.clock
	if c.keyFile != "" {
		var err error
		if opts.SealKeys, err = readKeyFile(c.keyFile); err != nil {
			return opts, &exitError{code: exitUsage, err: fmt.Errorf("key file: %w", err)}
		}
	}
	return opts, nil
}

// openRead opens the database read-only, for inspection. It never creates
// a file.
func (c *cli) openRead() (*litequeue.Queue, error) {
	return c.open(litequeue.OpenReadOnly)
}

// openWrite opens the database through the library's own write path,
// beside any app working on it. It does not create a missing file either,
// nor adopt a file without litequeue's tables, which it leaves as it was:
// a mistyped path must not quietly start an empty queue, or turn the
// app's own database into one.
func (c *cli) openWrite() (*litequeue.Queue, error) {
	return c.open(litequeue.OpenExisting)
}

// openCreate opens the database db for writing, with the options of
// --config, creating it, or litequeue's tables in it, if missing, and
// upgrading older tables: the target of a copy or a migration.
func (c *cli) openCreate(ctx context.Context, db string) (*litequeue.Queue, error) {
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	var q *litequeue.Queue
	if isServerURL(db) {
		q, err = postgres.Open(ctx, db, opts)
	} else {
		q, err = litequeue.Open(db, opts)
	}
	if err != nil {
		return nil, openError(db, err)
	}
	return q, nil
}

// open opens the database at dbPath with open, and the options of
// --config; it refuses a path where there is no file.
func (c *cli) open(open func(string, litequeue.Options) (*litequeue.Queue, error)) (*litequeue.Queue, error) {
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	path := c.dbPath()
	if isServerURL(path) {
		// A server has no read-only Queue: every command opens it as
		// OpenExisting does a file, refusing a database without
		// litequeue's tables.
		return postgres.OpenExisting(context.Background(), path, opts)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist (name the database with --db or $LITEQUEUE_DB)", path)
	}
	q, err := open(path, opts)
	return q, openError(path, err)
}

// openError is err, from opening the file at path, in the command's words
// where the library's would name its own API.
func openError(path string, err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, litequeue.ErrNoTables):
		return fmt.Errorf("%s has no litequeue tables: is --db the app's database? (the app makes them when it first opens the file)", path)
	case errors.Is(err, litequeue.ErrNotWritable) && errors.As(err, &errno):
		return fmt.Errorf("this process may not write %s (%v): stats, list, show, dead list and check only read it", path, errno)
	}
	return err
}

// dbName is the database as messages name it: a server's URL without its
// password.
func (c *cli) dbName() string { return redact(c.dbPath()) }

// redact returns db, a server's URL without its password, in its user
// part or its query.
func redact(db string) string {
	u, err := url.Parse(db)
	if err != nil || !isServerURL(db) {
		return db
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// isServerURL reports whether db is the URL of a PostgreSQL server rather
// than a file's path.
func isServerURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// read opens the database read-only, calls fn with it, and closes it.
func (c *cli) read(fn func(*litequeue.Queue) error) error {
	q, err := c.openRead()
	if err != nil {
		return err
	}
	defer q.Close()
	return fn(q)
}

// eachJob opens the database with open and calls fn for each job ID. It
// reports each failure on stderr and goes on; it fails if any did.
func (c *cli) eachJob(ctx context.Context, ids []int64, open func() (*litequeue.Queue, error), fn func(*litequeue.Queue, int64) error) error {
	q, err := open()
	if err != nil {
		return err
	}
	defer q.Close()
	failed := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := fn(q, id)
		if errors.Is(err, litequeue.ErrNotFound) {
			err = fmt.Errorf("no job %d in %s", id, c.dbName())
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "litequeue: %s\n", strings.TrimPrefix(err.Error(), "litequeue: "))
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: exitFailure} // each failure is reported
	}
	return nil
}

// eachID checks the job ID arguments, opens the database through the
// write path, and calls fn for each job, as eachJob does.
func (c *cli) eachID(ctx context.Context, args []string, fn func(*litequeue.Queue, int64) error) error {
	ids, err := parseIDs(args)
	if err != nil {
		return err
	}
	return c.eachJob(ctx, ids, c.openWrite, fn)
}
