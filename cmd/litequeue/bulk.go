package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue"
)

// bulkAction is an act on many jobs — a replay or a purge of dead jobs, a
// cancel or a delete by filter — as the command counts it, asks and does
// it.
type bulkAction struct {
	tally   func(*litequeue.Queue) (litequeue.Tally, error)
	act     func(context.Context, *litequeue.Queue, litequeue.Tally) (int, error)
	counted func(n int) string                     // the count, a line of stdout
	ask     func(n int) (question, refusal string) // see confirm
	jobs    string                                 // what it acts on: "dead jobs", "jobs"
	did     string                                 // "replayed", "deleted"
	done    func(n int) string                     // what it did, a line of stdout
	// What a dry run shows of the jobs, if anything: list reads them,
	// table writes them.
	list  func(*litequeue.Queue) ([]*litequeue.Job, error)
	table func([]*litequeue.Job)
}

// bulkFlags are the flags of a bulk act: --dry-run, --yes, --json.
type bulkFlags struct{ dryRun, yes, asJSON bool }

// bulk counts the jobs of a, says how many, asks unless yes, then acts on
// those counted and says what it did; a dry run shows them instead. When
// the jobs changed between the count and the act (a job died, or grew old
// enough), the act did nothing: bulk says so, counts again and asks
// again, or, with yes, where nobody confirmed the count, fails. It opens
// the database for writes only once the user agrees. With --json it
// writes one object at the end: "matched", the last count; "done", how
// many jobs it acted on; "dry_run"; and for a dry run "jobs", those
// matched.
func (c *cli) bulk(ctx context.Context, a bulkAction, flags bulkFlags) error {
	rep := c.report(flags.asJSON)
	rep.set("matched", 0, "done", 0, "dry_run", flags.dryRun)
	var t litequeue.Tally
	err := c.read(func(q *litequeue.Queue) (err error) {
		if t, err = a.tally(q); err != nil {
			return err
		}
		rep.set("matched", t.Jobs)
		rep.say("%s", a.counted(t.Jobs))
		if flags.dryRun && a.list != nil {
			return c.showBulk(q, a, rep)
		}
		return nil
	})
	switch {
	case err != nil || t.Jobs == 0:
		return rep.end(err)
	case flags.dryRun:
		rep.say("dry run: nothing %s", a.did)
		return rep.end(nil)
	}
	q, err := c.confirmBulk(ctx, a, flags, rep, t)
	if q != nil {
		q.Close()
	}
	return rep.end(err)
}

// showBulk shows, in a dry run, the jobs a would act on.
func (c *cli) showBulk(q *litequeue.Queue, a bulkAction, rep *report) error {
	jobs, err := a.list(q)
	if err != nil {
		return err
	}
	if rep.asJSON {
		rep.set("jobs", jobsJSON(jobs))
	} else {
		a.table(jobs)
	}
	return nil
}

// confirmBulk asks unless yes, opens the database for writes, and acts on
// the jobs of t, again after a new count and question for as long as they
// change in between (see bulk). It returns the Queue it opened, if any.
func (c *cli) confirmBulk(ctx context.Context, a bulkAction, flags bulkFlags, rep *report, t litequeue.Tally) (q *litequeue.Queue, err error) {
	for {
		if !flags.yes {
			question, refusal := a.ask(t.Jobs)
			if ok, err := c.agree(question, refusal, "nothing "+a.did); !ok {
				return q, err
			}
		}
		if q == nil {
			if q, err = c.openWrite(); err != nil {
				return nil, err
			}
		}
		pctx, stop := c.showProgress(ctx, a.did, flags.asJSON)
		n, err := a.act(pctx, q, t)
		stop()
		te, changed := errors.AsType[*litequeue.TallyError](err)
		if !changed {
			rep.set("done", n)
			rep.say("%s", a.done(n))
			return q, err
		}
		msg := fmt.Sprintf("the %s changed after they were counted: %d match now, not the %d counted; nothing %s", a.jobs, te.Got, te.Want, a.did)
		if flags.yes {
			return q, errors.New(msg + " (run the command again)")
		}
		fmt.Fprintln(c.stderr, msg)
		if t, err = a.tally(q); err != nil {
			return q, err
		}
		rep.set("matched", t.Jobs)
		rep.say("%s", a.counted(t.Jobs))
		if t.Jobs == 0 {
			return q, nil
		}
	}
}

// describeIDs says which IDs --after and --before let through.
func describeIDs(after, before int64) string {
	switch {
	case after != 0 && before != 0:
		return fmt.Sprintf("with an ID above %d and below %d", after, before)
	case after != 0:
		return fmt.Sprintf("with an ID above %d", after)
	}
	return fmt.Sprintf("with an ID below %d", before)
}

// idsOrAll checks the arguments of a command that acts on the jobs named
// by ID, or with --all on those its filter flags select (set: whether any
// of them is).
func (fs *flagSet) idsOrAll(all bool, args []string, set bool) error {
	switch {
	case all && len(args) > 0:
		return fs.usageError(errors.New("give job IDs or --all, not both"))
	case !all && len(args) == 0:
		return fs.usageError(errors.New("missing job IDs (or --all)"))
	case !all && set:
		return fs.usageError(errors.New("the flags that select jobs, such as --queue and --kind, go with --all"))
	}
	return nil
}

// bulkFlags defines --dry-run, --yes and --json of a command that does
// verb ("cancel") to many jobs with --all.
func (fs *flagSet) bulkFlags(verb string) *bulkFlags {
	var f bulkFlags
	fs.BoolVar(&f.dryRun, "dry-run", false, "with --all: count and show the jobs, and "+verb+" none")
	fs.BoolVar(&f.yes, "yes", false, "with --all: "+verb+" without asking (and fail, doing nothing, if the jobs change between the count and the act)")
	fs.BoolVar(&f.asJSON, "json", false, "write what was done as JSON")
	return &f
}
