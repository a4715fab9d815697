package main

import (
	"context"
)

// breakerReset defines the flags of "breaker reset" and returns the
// command.
func (c *cli) breakerReset(fs *flagSet) runFunc {
	asJSON := fs.Bool("json", false, "write what was done as JSON")
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
		rep := c.report(*asJSON)
		rep.set("kind", kind, "was", "closed")
		if !open {
			rep.say("the breaker of %s is closed already", kind)
			return rep.end(nil)
		}
		rep.set("was", b.State, "trips", b.Trips)
		rep.say("closed the breaker of %s (%s since %s, %s): its jobs are claimed again",
			kind, b.State, fmtTime(b.OpenedAt), plural(b.Trips, "trip"))
		return rep.end(nil)
	}
}
