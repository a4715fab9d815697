package main

import (
	"context"
	"errors"
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
	yes := fs.Bool("yes", false, "with --all: replay without asking (and fail, replaying nothing, if the dead jobs change between the count and the replay)")
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

// replayAll replays the dead jobs f selects, once the user agrees: those
// counted, and only if they are still as many (see bulk).
func (c *cli) replayAll(ctx context.Context, f litequeue.Filter, dryRun, yes bool) error {
	return c.bulk(bulkAction{
		tally:   func(q *litequeue.Queue) (litequeue.Tally, error) { return q.TallyReplay(ctx, f) },
		act:     func(q *litequeue.Queue, t litequeue.Tally) (int, error) { return q.ReplayTallied(ctx, f, t) },
		counted: func(n int) string { return plural(n, "dead job") + " " + describeFilter(f) },
		ask: func(n int) (string, string) {
			return fmt.Sprintf("Replay %s?", plural(n, "dead job")), fmt.Sprintf("refusing to replay %s", plural(n, "job"))
		},
		did:  "replayed",
		done: func(n int) string { return fmt.Sprintf("replayed %s: pending, due now", plural(n, "job")) },
		show: func(q *litequeue.Queue) error {
			jobs, err := q.List(ctx, f)
			c.deadTable(jobs)
			return err
		},
	}, dryRun, yes)
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
	yes := fs.Bool("yes", false, "delete without asking (and fail, deleting nothing, if the dead jobs change between the count and the purge)")
	return func(ctx context.Context, _ []string) error {
		return c.bulk(bulkAction{
			tally: func(q *litequeue.Queue) (litequeue.Tally, error) { return q.TallyPurge(ctx, *olderThan) },
			act: func(q *litequeue.Queue, t litequeue.Tally) (int, error) {
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
			did:  "deleted",
			done: func(n int) string { return "deleted " + plural(n, "dead job") },
		}, *dryRun, *yes)
	}
}

// bulkAction is a replay or a purge of many dead jobs, as the command
// counts it, asks and does it.
type bulkAction struct {
	tally   func(*litequeue.Queue) (litequeue.Tally, error)
	act     func(*litequeue.Queue, litequeue.Tally) (int, error)
	counted func(n int) string                     // the count, a line of stdout
	ask     func(n int) (question, refusal string) // see confirm
	did     string                                 // "replayed", "deleted"
	done    func(n int) string                     // what it did, a line of stdout
	show    func(*litequeue.Queue) error           // what a dry run shows of the jobs; nil: nothing
}

// bulk counts the jobs of a, says how many, asks unless yes, then acts on
// those counted and says what it did; a dry run shows them instead. When
// the jobs changed between the count and the act (a job died, or grew old
// enough), the act did nothing: bulk says so, counts again and asks
// again, or, with yes, where nobody confirmed the count, fails. It opens
// the database for writes only once the user agrees.
func (c *cli) bulk(a bulkAction, dryRun, yes bool) error {
	var t litequeue.Tally
	err := c.read(func(q *litequeue.Queue) (err error) {
		if t, err = a.tally(q); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, a.counted(t.Jobs))
		if dryRun && t.Jobs > 0 && a.show != nil {
			return a.show(q)
		}
		return nil
	})
	switch {
	case err != nil || t.Jobs == 0:
		return err
	case dryRun:
		fmt.Fprintln(c.stdout, "dry run: nothing "+a.did)
		return nil
	}
	var q *litequeue.Queue
	for {
		if !yes {
			question, refusal := a.ask(t.Jobs)
			if ok, err := c.agree(question, refusal, "nothing "+a.did); !ok {
				return err
			}
		}
		if q == nil {
			if q, err = c.openWrite(); err != nil {
				return err
			}
			defer q.Close()
		}
		n, err := a.act(q, t)
		te, changed := errors.AsType[*litequeue.TallyError](err)
		if !changed {
			fmt.Fprintln(c.stdout, a.done(n))
			return err
		}
		msg := fmt.Sprintf("the dead jobs changed after they were counted: %d match now, not the %d counted; nothing %s", te.Got, te.Want, a.did)
		if yes {
			return errors.New(msg + " (run the command again)")
		}
		fmt.Fprintln(c.stderr, msg)
		if t, err = a.tally(q); err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, a.counted(t.Jobs))
		if t.Jobs == 0 {
			return nil
		}
	}
}
