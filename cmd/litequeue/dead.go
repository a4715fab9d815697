package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/litequeue/litequeue"
)

// deadUsage is the help of "dead".
const deadUsage = `usage: litequeue dead list|retry|purge ...

  dead list [--queue Q] [--kind K] [--limit N] [--json]
                    the dead letters, in ID order
  dead retry ID...  replay dead jobs: pending again, tries reset, history kept
  dead retry --all [--queue Q] [--kind K] [--dry-run] [--yes]
                    replay every dead job the filter matches
  dead purge [--older-than D] [--dry-run] [--yes]
                    delete dead jobs and their history for good

Run "litequeue dead COMMAND -h" for the flags of one.
`

// dead runs "dead list", "dead retry" and "dead purge".
func (c *cli) dead(ctx context.Context, args []string) error {
	const use = "dead list|retry|purge ..."
	if len(args) == 0 {
		return &exitError{code: exitUsage, err: fmt.Errorf("dead needs a command: list, retry or purge"), hint: use}
	}
	switch args[0] {
	case "list":
		return c.deadList(ctx, args[1:])
	case "retry":
		return c.deadRetry(ctx, args[1:])
	case "purge":
		return c.deadPurge(ctx, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, deadUsage)
		return nil
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("unknown command \"dead %s\"", args[0]), hint: use}
}

// deadList runs "dead list".
func (c *cli) deadList(ctx context.Context, args []string) error {
	const use = "dead list [--queue Q] [--kind K] [--limit N] [--json]"
	fs := c.flagSet("dead list", use)
	queue := fs.String("queue", "", "only jobs on this `queue`")
	kind := fs.String("kind", "", "only jobs of this `kind`")
	limit := fs.Int("limit", 100, "show at most `N` jobs, oldest first; 0: all")
	asJSON := fs.Bool("json", false, "write JSON")
	_, err := fs.parse(args, 0, 0)
	if err != nil {
		return err
	}
	f := litequeue.Filter{State: litequeue.Dead, Queue: *queue, Kind: *kind}
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
	c.moreNote(len(jobs), more)
	return nil
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

// deadRetry runs "dead retry": a replay of the dead jobs named, or of every
// dead job that matches with --all.
func (c *cli) deadRetry(ctx context.Context, args []string) error {
	const use = "dead retry ID... | dead retry --all [--queue Q] [--kind K] [--dry-run] [--yes]"
	fs := c.flagSet("dead retry", use)
	all := fs.Bool("all", false, "replay every dead job that --queue and --kind select")
	queue := fs.String("queue", "", "with --all: only jobs on this `queue`")
	kind := fs.String("kind", "", "with --all: only jobs of this `kind`")
	dryRun := fs.Bool("dry-run", false, "say what would be replayed, and replay nothing")
	yes := fs.Bool("yes", false, "with --all: replay without asking")
	pos, err := fs.parse(args, 0, -1) // IDs or --all: checked below
	if err != nil {
		return err
	}
	switch {
	case *all && len(pos) > 0:
		return &exitError{code: exitUsage, err: errors.New("give job IDs or --all, not both"), hint: use}
	case !*all && len(pos) == 0:
		return &exitError{code: exitUsage, err: errors.New("missing job IDs (or --all)"), hint: use}
	case !*all && (*queue != "" || *kind != ""):
		return &exitError{code: exitUsage, err: errors.New("--queue and --kind select jobs for --all"), hint: use}
	}
	if *all {
		return c.replayAll(ctx, litequeue.Filter{State: litequeue.Dead, Queue: *queue, Kind: *kind}, *dryRun, *yes)
	}
	ids, err := parseIDs(pos)
	if err != nil {
		return err
	}
	if *dryRun {
		return c.eachJob(ctx, ids, c.openRead, func(q *litequeue.Queue, id int64) error {
			j, err := q.Get(ctx, id)
			if err == nil && j.State != litequeue.Dead {
				return fmt.Errorf("job %d is %s, not dead", id, j.State)
			}
			if err == nil {
				fmt.Fprintf(c.stdout, "would replay job %d (%s on %s)\n", id, j.Kind, j.Queue)
			}
			return err
		})
	}
	return c.eachJob(ctx, ids, c.openWrite, func(q *litequeue.Queue, id int64) error {
		if err := q.Replay(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "replayed job %d: pending, due now\n", id)
		return nil
	})
}

// eachJob opens the database with open and calls fn for each job ID. It
// reports each failure on stderr and goes on; it fails if any did.
func (c *cli) eachJob(ctx context.Context, ids []int64, open func() (*litequeue.Queue, error), fn func(*litequeue.Queue, int64) error) error {
	q, err := open()
	if err != nil {
		return err
	}
	defer q.Close()
	failed := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := fn(q, id)
		if errors.Is(err, litequeue.ErrNotFound) {
			err = fmt.Errorf("no job %d in %s", id, c.dbPath())
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "litequeue: %s\n", strings.TrimPrefix(err.Error(), "litequeue: "))
			failed++
		}
	}
	if failed > 0 {
		return &exitError{code: exitFailure} // each failure is reported
	}
	return nil
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
		ok, err := c.confirm(fmt.Sprintf("Replay %s?", plural(len(jobs), "dead job")),
			fmt.Sprintf("refusing to replay %s", plural(len(jobs), "job")))
		if err != nil || !ok {
			if err == nil {
				fmt.Fprintln(c.stderr, "nothing replayed")
			}
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

// deadPurge runs "dead purge": deletes dead jobs and their history.
func (c *cli) deadPurge(ctx context.Context, args []string) error {
	const use = "dead purge [--older-than D] [--dry-run] [--yes]"
	fs := c.flagSet("dead purge", use)
	olderThan := durationFlag(fs.FlagSet, "older-than", 0, "only jobs dead for at least this long, e.g. 7d; 0: every dead job")
	dryRun := fs.Bool("dry-run", false, "count what would be deleted, and delete nothing")
	yes := fs.Bool("yes", false, "delete without asking")
	_, err := fs.parse(args, 0, 0)
	if err != nil {
		return err
	}
	q, err := c.openRead()
	if err != nil {
		return err
	}
	n, err := q.CountDead(ctx, *olderThan)
	q.Close()
	if err != nil {
		return err
	}
	if *olderThan > 0 {
		fmt.Fprintf(c.stdout, "%s dead for %s or more\n", plural(n, "job"), shortDur(*olderThan))
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
		ok, err := c.confirm(fmt.Sprintf("Delete %s and their history for good?", plural(n, "job")),
			fmt.Sprintf("refusing to delete %s", plural(n, "job")))
		if err != nil || !ok {
			if err == nil {
				fmt.Fprintln(c.stderr, "nothing deleted")
			}
			return err
		}
	}
	if q, err = c.openWrite(); err != nil {
		return err
	}
	defer q.Close()
	deleted, err := q.PurgeDead(ctx, *olderThan)
	fmt.Fprintf(c.stdout, "deleted %s\n", plural(deleted, "dead job"))
	return err
}
