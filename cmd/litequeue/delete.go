package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// deleteJobs defines the flags of "delete", none of its own, and returns
// the command: it deletes finished or dead jobs and their history for
// good.
func (c *cli) deleteJobs(fs *flagSet) runFunc {
	return func(ctx context.Context, args []string) error {
		return c.eachID(ctx, args, func(q *litequeue.Queue, id int64) error {
			if err := q.Delete(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "deleted job %d and its history\n", id)
			return nil
		})
	}
}
