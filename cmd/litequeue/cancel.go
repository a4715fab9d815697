package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue"
)

// cancel defines the flags of "cancel" and returns the command: it
// cancels the jobs named, or with --all those that its flags select.
func (c *cli) cancel(fs *flagSet) runFunc {
	all := fs.Bool("all", false, "cancel every job that --state, --queue, --kind, --after, --before and --error-contains select")
	state := fs.String("state", "", "with --all: only jobs in this `state`, pending, waiting or running (default pending)")
	filter := fs.filterFlags("with --all: ")
	bf := fs.bulkFlags("cancel")
	return func(ctx context.Context, args []string) error {
		if err := fs.idsOrAll(*all, args, filter.selects() || *state != ""); err != nil {
			return err
		}
		if *all {
			st, err := parseState(cmp.Or(*state, string(litequeue.Pending)))
			if err != nil {
				return err
			}
			f, err := filter.filter(st)
			if err != nil {
				return err
			}
			return c.cancelAll(ctx, f, *bf)
		}
		if bf.dryRun {
			return fs.usageError(errors.New("--dry-run goes with --all"))
		}
		rep := c.report(bf.asJSON)
		rep.ids("cancelled", "stopping")
		return rep.end(c.eachID(ctx, args, func(q *litequeue.Queue, id int64) error {
			if err := q.Cancel(ctx, id); err != nil {
				return err
			}
			j, err := q.Get(ctx, id)
			switch {
			case err != nil:
				return err
			case j.State == litequeue.Running:
				rep.addID("stopping", id)
				rep.say("job %d is running: its worker cancels it at its next lease renewal", id)
			default:
				rep.addID("cancelled", id)
				rep.say("cancelled job %d", id)
			}
			return nil
		}))
	}
}

// cancelAll cancels the jobs f selects, once the user agrees (see bulk).
func (c *cli) cancelAll(ctx context.Context, f litequeue.Filter, flags bulkFlags) error {
	return c.bulk(ctx, bulkAction{
		tally: func(q *litequeue.Queue) (litequeue.Tally, error) { return q.TallyCancel(ctx, f) },
		act: func(ctx context.Context, q *litequeue.Queue, t litequeue.Tally) (int, error) {
			return q.CancelTallied(ctx, f, t)
		},
		counted: func(n int) string { return plural(n, string(f.State)+" job") + " " + describeFilter(f) },
		ask: func(n int) (string, string) {
			return fmt.Sprintf("Cancel %s?", plural(n, "job")), fmt.Sprintf("refusing to cancel %s", plural(n, "job"))
		},
		jobs: string(f.State) + " jobs",
		did:  "cancelled",
		done: func(n int) string {
			if f.State == litequeue.Running {
				return fmt.Sprintf("cancelled %s: their workers stop them at their next lease renewal", plural(n, "running job"))
			}
			return "cancelled " + plural(n, "job")
		},
		list:  func(q *litequeue.Queue) ([]*litequeue.Job, error) { return q.List(ctx, f) },
		table: c.jobTable,
	}, flags)
}
