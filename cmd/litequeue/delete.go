package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// deleteJobs runs "delete": deletes finished or dead jobs and their
// history for good.
func (c *cli) deleteJobs(ctx context.Context, args []string) error {
	fs := c.flagSet("delete", "delete ID...")
	pos, err := fs.parse(args, 1, -1)
	if err != nil {
		return err
	}
	ids, err := parseIDs(pos)
	if err != nil {
		return err
	}
	return c.eachJob(ctx, ids, c.openWrite, func(q *litequeue.Queue, id int64) error {
		if err := q.Delete(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "deleted job %d and its history\n", id)
		return nil
	})
}
