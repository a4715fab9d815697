package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue"
)

// deleteJobs defines the flags of "delete" and returns the command: it
// deletes finished or dead jobs and their history for good, those named,
// or with --all those that its flags select.
func (c *cli) deleteJobs(fs *flagSet) runFunc {
	all := fs.Bool("all", false, "delete every job that --state, --queue, --kind, --after, --before and --error-contains select")
	state := fs.String("state", "", "with --all, needed: only jobs in this `state`: completed, dead, discarded, cancelled or expired")
	filter := fs.filterFlags("with --all: ")
	bf := fs.bulkFlags("delete")
	return func(ctx context.Context, args []string) error {
		if err := fs.idsOrAll(*all, args, filter.selects() || *state != ""); err != nil {
			return err
		}
		if *all {
			return c.deleteAll(ctx, fs, *state, filter, *bf)
		}
		if bf.dryRun {
			return fs.usageError(errors.New("--dry-run goes with --all"))
		}
		rep := c.report(bf.asJSON)
		rep.ids("deleted")
		return rep.end(c.eachID(ctx, args, func(q *litequeue.Queue, id int64) error {
			if err := q.Delete(ctx, id); err != nil {
				return err
			}
			rep.addID("deleted", id)
			rep.say("deleted job %d and its history", id)
			return nil
		}))
	}
}

// deleteAll deletes the jobs in state that filter selects, once the user
// agrees (see bulk).
func (c *cli) deleteAll(ctx context.Context, fs *flagSet, state string, filter filterFlags, flags bulkFlags) error {
	if state == "" || state == string(litequeue.Pending) || state == string(litequeue.Running) {
		return fs.usageError(fmt.Errorf("delete --all needs --state: completed, dead, discarded, cancelled or expired, not %q", state))
	}
	st, err := parseState(state)
	if err != nil {
		return err
	}
	f, err := filter.filter(st)
	if err != nil {
		return err
	}
	return c.bulk(ctx, bulkAction{
		tally: func(q *litequeue.Queue) (litequeue.Tally, error) { return q.TallyDelete(ctx, f) },
		act: func(ctx context.Context, q *litequeue.Queue, t litequeue.Tally) (int, error) {
			return q.DeleteTallied(ctx, f, t)
		},
		counted: func(n int) string { return plural(n, state+" job") + " " + describeFilter(f) },
		ask: func(n int) (string, string) {
			return fmt.Sprintf("Delete %s and their history for good?", plural(n, "job")), fmt.Sprintf("refusing to delete %s", plural(n, "job"))
		},
		jobs:  state + " jobs",
		did:   "deleted",
		done:  func(n int) string { return "deleted " + plural(n, "job") },
		list:  func(q *litequeue.Queue) ([]*litequeue.Job, error) { return q.List(ctx, f) },
		table: c.jobTable,
	}, flags)
}
