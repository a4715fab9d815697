package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// cancel defines the flags of "cancel", none of its own, and returns the
// command.
func (c *cli) cancel(fs *flagSet) runFunc {
	return func(ctx context.Context, args []string) error {
		return c.eachID(ctx, args, func(q *litequeue.Queue, id int64) error {
			if err := q.Cancel(ctx, id); err != nil {
				return err
			}
			j, err := q.Get(ctx, id)
			switch {
			case err != nil:
				return err
			case j.State == litequeue.Running:
				fmt.Fprintf(c.stdout, "job %d is running: its worker cancels it at its next lease renewal\n", id)
			default:
				fmt.Fprintf(c.stdout, "cancelled job %d\n", id)
			}
			return nil
		})
	}
}
