package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// deadList defines the flags of "dead list" and returns the command.
func (c *cli) deadList(fs *flagSet) runFunc {
	filter := fs.filterFlags("")
	limit := fs.limitFlag()
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		jobs, more, err := c.listJobs(ctx, filter.filter(litequeue.Dead), *limit)
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
		c.moreNote(len(jobs), more)
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
	all := fs.Bool("all", false, "replay every dead job that --queue and --kind select")
	filter := fs.filterFlags("with --all: ")
	dryRun := fs.Bool("dry-run", false, "say what would be replayed, and replay nothing")
	yes := fs.Bool("yes", false, "with --all: replay without asking")
	return func(ctx context.Context, args []string) error {
		switch {
		case *all && len(args) > 0:
			return fs.usageError(errors.New("give job IDs or --all, not both"))
		case !*all && len(args) == 0:
			return fs.usageError(errors.New("missing job IDs (or --all)"))
		case !*all && (*filter.queue != "" || *filter.kind != ""):
			return fs.usageError(errors.New("--queue and --kind select jobs for --all"))
		case *all:
			return c.replayAll(ctx, filter.filter(litequeue.Dead), *dryRun, *yes)
		}
		ids, err := parseIDs(args)
		if err != nil {
			return err
		}
		if *dryRun {
			return c.eachJob(ctx, ids, c.openRead, c.wouldReplay(ctx))
		}
		return c.eachJob(ctx, ids, c.openWrite, c.replay(ctx))
	}
}

// wouldReplay returns the function that says whether dead retry would
// replay a job.
func (c *cli) wouldReplay(ctx context.Context) func(*litequeue.Queue, int64) error {
	return func(q *litequeue.Queue, id int64) error {
		j, err := q.Get(ctx, id)
		if err == nil && j.State != litequeue.Dead {
			return fmt.Errorf("job %d is %s, not dead", id, j.State)
		}
		if err == nil {
			fmt.Fprintf(c.stdout, "would replay job %d (%s on %s)\n", id, j.Kind, j.Queue)
		}
		return err
	}
}

// replay returns the function that replays a dead job.
func (c *cli) replay(ctx context.Context) func(*litequeue.Queue, int64) error {
	return func(q *litequeue.Queue, id int64) error {
		if err := q.Replay(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "replayed job %d: pending, due now\n", id)
		return nil
	}
}

// replayAll replays the dead jobs f selects, once the user agrees.
func (c *cli) replayAll(ctx context.Context, f litequeue.Filter, dryRun, yes bool) error {
	jobs, _, err := c.listJobs(ctx, f, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s %s\n", plural(len(jobs), "dead job"), describeFilter(f))
	if len(jobs) == 0 {
		return nil
	}
	if dryRun {
		c.deadTable(jobs)
		fmt.Fprintln(c.stdout, "dry run: nothing replayed")
		return nil
	}
	if !yes {
		ok, err := c.agree(fmt.Sprintf("Replay %s?", plural(len(jobs), "dead job")),
			fmt.Sprintf("refusing to replay %s", plural(len(jobs), "job")), "nothing replayed")
		if !ok {
			return err
		}
	}
	q, err := c.openWrite()
	if err != nil {
		return err
	}
	defer q.Close()
	n, err := q.ReplayDead(ctx, f)
	fmt.Fprintf(c.stdout, "replayed %s: pending, due now\n", plural(n, "job"))
	return err
}

// describeFilter says which jobs a --queue and --kind select.
func describeFilter(f litequeue.Filter) string {
	var parts []string
	if f.Queue != "" {
		parts = append(parts, "on queue "+f.Queue)
	}
	if f.Kind != "" {
		parts = append(parts, "of kind "+f.Kind)
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
	yes := fs.Bool("yes", false, "delete without asking")
	return func(ctx context.Context, _ []string) error {
		var n int
		err := c.read(func(q *litequeue.Queue) (err error) {
			n, err = q.CountDead(ctx, *olderThan)
			return err
		})
		if err != nil {
			return err
		}
		if *olderThan > 0 {
			fmt.Fprintf(c.stdout, "%s dead for %s or more\n", plural(n, "job"), litequeue.FormatDuration(*olderThan))
		} else {
			fmt.Fprintf(c.stdout, "%s\n", plural(n, "dead job"))
		}
		switch {
		case n == 0:
			return nil
		case *dryRun:
			fmt.Fprintln(c.stdout, "dry run: nothing deleted")
			return nil
		case !*yes:
			ok, err := c.agree(fmt.Sprintf("Delete %s and their history for good?", plural(n, "job")),
				fmt.Sprintf("refusing to delete %s", plural(n, "job")), "nothing deleted")
			if !ok {
				return err
			}
		}
		return c.purge(ctx, *olderThan)
	}
}

// purge deletes the jobs dead for olderThan or more, and says how many.
func (c *cli) purge(ctx context.Context, olderThan time.Duration) error {
	q, err := c.openWrite()
	if err != nil {
		return err
	}
	defer q.Close()
	deleted, err := q.PurgeDead(ctx, olderThan)
	fmt.Fprintf(c.stdout, "deleted %s\n", plural(deleted, "dead job"))
	return err
}
