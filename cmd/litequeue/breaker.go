package main

import (
	"context"
	"fmt"
)

// breakerReset defines the flags of "breaker reset", none of its own, and
// returns the command.
func (c *cli) breakerReset(fs *flagSet) runFunc {
	return func(ctx context.Context, args []string) error {
		kind := args[0]
		q, err := c.openWrite()
		if err != nil {
			return err
		}
		defer q.Close()
		st, err := q.Stats(ctx)
		if err != nil {
			return err
		}
		b, open := st.Breakers[kind]
		if err := q.ResetBreaker(ctx, kind); err != nil {
			return err
		}
		if !open {
			fmt.Fprintf(c.stdout, "the breaker of %s is closed already\n", kind)
			return nil
		}
		fmt.Fprintf(c.stdout, "closed the breaker of %s (%s since %s, %s): its jobs are claimed again\n",
			kind, b.State, fmtTime(b.OpenedAt), plural(b.Trips, "trip"))
		return nil
	}
}
