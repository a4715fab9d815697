package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue"
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
	asJSON := fs.Bool("json", false, "write what was copied as JSON")
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
		dst, err := c.openCreate(ctx, to)
		if err != nil {
			return err
		}
		pctx, stop := c.showProgress(ctx, "copied", *asJSON)
		res, err := litequeue.Copy(pctx, src, dst)
		stop()
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		rep := c.report(*asJSON)
		rep.set("from", c.dbName(), "to", redact(to), "jobs", res.Jobs, "history_rows", res.HistoryRows, "keys", res.Keys, "skipped", res.Skipped)
		rep.say("copied %d jobs, %d history rows and %d keys from %s to %s; skipped %d jobs copied before",
			res.Jobs, res.HistoryRows, res.Keys, c.dbName(), redact(to), res.Skipped)
		return rep.end(nil)
	}
}
