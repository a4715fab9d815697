package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// runNow runs "run-now": makes pending jobs, scheduled or waiting to
// retry, due at once.
func (c *cli) runNow(ctx context.Context, args []string) error {
	fs := c.flagSet("run-now", "run-now ID...")
	pos, err := fs.parse(args, 1, -1)
	if err != nil {
		return err
	}
	ids, err := parseIDs(pos)
	if err != nil {
		return err
	}
	return c.eachJob(ctx, ids, c.openWrite, func(q *litequeue.Queue, id int64) error {
		if err := q.RunNow(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "job %d is due now\n", id)
		return nil
	})
}
