package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// runNow defines the flags of "run-now", none of its own, and returns the
// command: it makes pending jobs, scheduled or waiting to retry, due at
// once.
func (c *cli) runNow(fs *flagSet) runFunc {
	return func(ctx context.Context, args []string) error {
		return c.eachID(ctx, args, func(q *litequeue.Queue, id int64) error {
			if err := q.RunNow(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(c.stdout, "job %d is due now\n", id)
			return nil
		})
	}
}
