package main

import (
	"context"

	"github.com/litequeue/litequeue"
)

// runNow defines the flags of "run-now" and returns the command: it
// makes pending jobs, scheduled or waiting to retry, due at once.
func (c *cli) runNow(fs *flagSet) runFunc {
	asJSON := fs.Bool("json", false, "write what was done as JSON")
	return func(ctx context.Context, args []string) error {
		rep := c.report(*asJSON)
		rep.ids("due_now")
		return rep.end(c.eachID(ctx, args, func(q *litequeue.Queue, id int64) error {
			if err := q.RunNow(ctx, id); err != nil {
				return err
			}
			rep.addID("due_now", id)
			rep.say("job %d is due now", id)
			return nil
		}))
	}
}
