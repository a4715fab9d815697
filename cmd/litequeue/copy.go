package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

// copyJobs defines the flags of "copy" and returns the command: it copies
// the unfinished and dead jobs of one database, with their history and
// keys, into another (see litequeue.Copy) — a file onto a server, say —
// each job once: run again, it skips, and counts, the jobs it copied
// before.
func (c *cli) copyJobs(fs *flagSet) runFunc {
	var from, to string
	fs.Var(pathFlag{&from}, "from", "the database to copy from: a file `path` or a postgres:// URL (default the database)")
	fs.Var(pathFlag{&to}, "to", "the database to copy into, created if missing: a file `path` or a postgres:// URL")
	return func(ctx context.Context, _ []string) error {
		if to == "" {
			return fs.usageError(errors.New("copy needs --to"))
		}
		if from != "" {
			c.db = from
		}
		if c.dbPath() == to {
			return fs.usageError(fmt.Errorf("--from and --to are both %s", c.dbName()))
		}
		src, err := c.openRead()
		if err != nil {
			return err
		}
		defer src.Close()
		opts, err := c.options()
		if err != nil {
			return err
		}
		var dst *litequeue.Queue
		if isServerURL(to) {
			dst, err = postgres.Open(ctx, to, opts)
		} else {
			dst, err = litequeue.Open(to, opts)
		}
		if err != nil {
			return openError(to, err)
		}
		res, err := litequeue.Copy(ctx, src, dst)
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "copied %d jobs, %d history rows and %d keys from %s to %s; skipped %d jobs copied before\n",
			res.Jobs, res.HistoryRows, res.Keys, c.dbName(), redact(to), res.Skipped)
		return nil
	}
}
