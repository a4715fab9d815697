package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/litequeue/litequeue"
)

// backup defines the flags of "backup" and returns the command.
func (c *cli) backup(fs *flagSet) runFunc {
	var to string
	fs.Var(pathFlag{&to}, "to", "write the copy to this `path`, with mode 0600")
	force := fs.Bool("force", false, "replace the regular file or symbolic link at --to, if there is one")
	return func(ctx context.Context, _ []string) error {
		if to == "" {
			return fs.usageError(errors.New("--to is missing: name the file to write the copy to"))
		}
		if isServerURL(c.dbPath()) {
			return fs.usageError(errors.New("--db names a PostgreSQL server, which has no file to copy: back it up with its own tools (pg_dump)"))
		}
		return c.read(func(q *litequeue.Queue) error {
			err := q.Backup(ctx, to, litequeue.BackupOptions{Overwrite: *force})
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w (--force replaces it)", err)
			}
			if err != nil {
				return err
			}
			fi, err := os.Stat(to)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "wrote %s (%s), a snapshot of %s\ncheck it with: %s check --db %s\n",
				to, fmtBytes(fi.Size()), c.dbPath(), c.self, shellQuote(to))
			return nil
		})
	}
}
