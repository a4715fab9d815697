package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/litequeue/litequeue"
)

// deadList defines the flags of "dead list" and returns the command.
func (c *cli) deadList(fs *flagSet) runFunc {
	filter := fs.filterFlags("")
	limit := fs.limitFlag()
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		f, err := filter.filter(litequeue.Dead)
		if err != nil {
			return err
		}
		jobs, more, err := c.listJobs(ctx, f, *limit)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(c.stdout, jobsJSON(jobs))
		}
		if len(jobs) == 0 {
			fmt.Fprintln(c.stdout, "no dead jobs")
			return nil
		}
		c.deadTable(jobs)
		c.moreNote(jobs, more)
		return nil
	}
}

// deadTable writes dead jobs as a table: when each died, and of what.
func (c *cli) deadTable(jobs []*litequeue.Job) {
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "ID\tQUEUE\tKIND\tTRIES\tDIED\tLAST ERROR")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID, j.Queue, j.Kind, j.Attempt, j.MaxTries,
			fmtTime(j.FinishedAt), orDash(oneLine(j.LastError, 80)))
	}
	tw.Flush()
}

// deadRetry defines the flags of "dead retry" and returns the command: a
// replay of the dead jobs named, or of every dead job that matches with
// --all.
func (c *cli) deadRetry(fs *flagSet) runFunc {
	all := fs.Bool("all", false, "replay every dead job that --queue, --kind, --after, --before and --error-contains select")
	filter := fs.filterFlags("with --all: ")
	dryRun := fs.Bool("dry-run", false, "say what would be replayed, and replay nothing")
	yes := fs.Bool("yes", false, "with --all: replay without asking (and fail, replaying nothing, if the dead jobs change between the count and the replay)")
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, args []string) error {
		if err := fs.idsOrAll(*all, args, filter.selects()); err != nil {
			return err
		}
		if *all {
			f, err := filter.filter(litequeue.Dead)
			if err != nil {
				return err
			}
			return c.replayAll(ctx, f, bulkFlags{*dryRun, *yes, *asJSON})
		}
		ids, err := parseIDs(args)
		if err != nil {
			return err
		}
		rep := c.report(*asJSON)
		if *dryRun {
			rep.set("dry_run", true)
			rep.ids("would_replay")
			return rep.end(c.eachJob(ctx, ids, c.openRead, c.wouldReplay(ctx, rep)))
		}
		rep.ids("replayed")
		return rep.end(c.eachJob(ctx, ids, c.openWrite, c.replay(ctx, rep)))
	}
}

// wouldReplay returns the function that says whether dead retry would
// replay a job.
func (c *cli) wouldReplay(ctx context.Context, rep *report) func(*litequeue.Queue, int64) error {
	return func(q *litequeue.Queue, id int64) error {
		j, err := q.Get(ctx, id)
		if err == nil && j.State != litequeue.Dead {
			return fmt.Errorf("job %d is %s, not dead", id, j.State)
		}
		if err == nil {
			rep.addID("would_replay", id)
			rep.say("would replay job %d (%s on %s)", id, j.Kind, j.Queue)
		}
		return err
	}
}

// replay returns the function that replays a dead job.
func (c *cli) replay(ctx context.Context, rep *report) func(*litequeue.Queue, int64) error {
	return func(q *litequeue.Queue, id int64) error {
		if err := q.Replay(ctx, id); err != nil {
			return err
		}
		rep.addID("replayed", id)
		rep.say("replayed job %d: pending, due now", id)
		return nil
	}
}

// replayAll replays the dead jobs f selects, once the user agrees: those
// counted, and only if they are still as many (see bulk).
func (c *cli) replayAll(ctx context.Context, f litequeue.Filter, flags bulkFlags) error {
	return c.bulk(ctx, bulkAction{
		tally: func(q *litequeue.Queue) (litequeue.Tally, error) { return q.TallyReplay(ctx, f) },
		act: func(ctx context.Context, q *litequeue.Queue, t litequeue.Tally) (int, error) {
			return q.ReplayTallied(ctx, f, t)
		},
		counted: func(n int) string { return plural(n, "dead job") + " " + describeFilter(f) },
		ask: func(n int) (string, string) {
			return fmt.Sprintf("Replay %s?", plural(n, "dead job")), fmt.Sprintf("refusing to replay %s", plural(n, "job"))
		},
		jobs:  "dead jobs",
		did:   "replayed",
		done:  func(n int) string { return fmt.Sprintf("replayed %s: pending, due now", plural(n, "job")) },
		list:  func(q *litequeue.Queue) ([]*litequeue.Job, error) { return q.List(ctx, f) },
		table: c.deadTable,
	}, flags)
}

// describeFilter says which jobs the flags of filterFlags select.
func describeFilter(f litequeue.Filter) string {
	var parts []string
	if f.Queue != "" {
		parts = append(parts, "on queue "+f.Queue)
	}
	if f.Kind != "" {
		parts = append(parts, "of kind "+f.Kind)
	}
	if f.After != 0 || f.Before != 0 {
		parts = append(parts, describeIDs(f.After, f.Before))
	}
	if f.ErrorContains != "" {
		parts = append(parts, fmt.Sprintf("with an error containing %q", f.ErrorContains))
	}
	if len(parts) == 0 {
		return "in all"
	}
	return strings.Join(parts, " ")
}

// deadPurge defines the flags of "dead purge" and returns the command:
// it deletes dead jobs and their history.
func (c *cli) deadPurge(fs *flagSet) runFunc {
	olderThan := fs.durationFlag("older-than", 0, "only jobs dead for at least this long, e.g. 7d; 0: every dead job")
	dryRun := fs.Bool("dry-run", false, "count what would be deleted, and delete nothing")
	yes := fs.Bool("yes", false, "delete without asking (and fail, deleting nothing, if the dead jobs change between the count and the purge)")
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		return c.bulk(ctx, bulkAction{
			tally: func(q *litequeue.Queue) (litequeue.Tally, error) { return q.TallyPurge(ctx, *olderThan) },
			act: func(ctx context.Context, q *litequeue.Queue, t litequeue.Tally) (int, error) {
				return q.PurgeTallied(ctx, *olderThan, t)
			},
			counted: func(n int) string {
				if *olderThan > 0 {
					return fmt.Sprintf("%s dead for %s or more", plural(n, "job"), litequeue.FormatDuration(*olderThan))
				}
				return plural(n, "dead job")
			},
			ask: func(n int) (string, string) {
				history := "their history"
				if n == 1 {
					history = "its history"
				}
				return fmt.Sprintf("Delete %s and %s for good?", plural(n, "job"), history),
					fmt.Sprintf("refusing to delete %s", plural(n, "job"))
			},
			jobs: "dead jobs",
			did:  "deleted",
			done: func(n int) string { return "deleted " + plural(n, "dead job") },
		}, bulkFlags{*dryRun, *yes, *asJSON})
	}
}
