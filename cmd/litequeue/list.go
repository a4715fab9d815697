package main

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue"
)

// states are the job states, in the order of their lives.
var states = []litequeue.State{
	litequeue.Waiting, litequeue.Pending, litequeue.Running, litequeue.Completed,
	litequeue.Dead, litequeue.Discarded, litequeue.Cancelled, litequeue.Expired,
}

// parseState checks a --state value; "" means every state.
func parseState(s string) (litequeue.State, error) {
	if s == "" {
		return "", nil
	}
	for _, st := range states {
		if string(st) == s {
			return st, nil
		}
	}
	return "", usageErrorf("unknown state %q (want waiting, pending, running, completed, dead, discarded, cancelled or expired)", s)
}

// list defines the flags of "list" and returns the command.
func (c *cli) list(fs *flagSet) runFunc {
	state := fs.String("state", "", "only jobs in this `state`: waiting, pending, running, completed, dead, discarded, cancelled or expired")
	filter := fs.filterFlags("")
	limit := fs.limitFlag()
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		st, err := parseState(*state)
		if err != nil {
			return err
		}
		f, err := filter.filter(st)
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
		c.jobTable(jobs)
		c.moreNote(jobs, more)
		return nil
	}
}

// listJobs lists the jobs f selects, at most limit of them (0: all), and
// reports whether there were more.
func (c *cli) listJobs(ctx context.Context, f litequeue.Filter, limit int) (jobs []*litequeue.Job, more bool, err error) {
	if limit < 0 {
		return nil, false, usageErrorf("--limit %d is negative", limit)
	}
	if limit > 0 {
		f.Limit = limit + 1 // one more, to know whether there are more
	}
	err = c.read(func(q *litequeue.Queue) error {
		jobs, err = q.List(ctx, f)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if limit > 0 && len(jobs) > limit {
		return jobs[:limit], true, nil
	}
	return jobs, false, nil
}

// moreNote tells, on stderr, that a list stopped at its limit, and how
// to see the next page.
func (c *cli) moreNote(jobs []*litequeue.Job, more bool) {
	if more {
		fmt.Fprintf(c.stderr, "(the first %d shown; --after %d shows the next, --limit N more, --limit 0 all)\n", len(jobs), jobs[len(jobs)-1].ID)
	}
}

// dueAt returns when a job is due, zero for a job that nothing runs again
// on its own (a dead job keeps the RunAt of its last try).
func dueAt(j *litequeue.Job) time.Time {
	if j.State == litequeue.Pending || j.State == litequeue.Running {
		return j.RunAt
	}
	return time.Time{}
}

// jobsJSON returns the JSON form of jobs, without payloads; never null.
func jobsJSON(jobs []*litequeue.Job) []jobJSON {
	out := make([]jobJSON, len(jobs))
	for i, j := range jobs {
		out[i] = toJobJSON(j, false)
	}
	return out
}

// jobTable writes jobs as a table.
func (c *cli) jobTable(jobs []*litequeue.Job) {
	if len(jobs) == 0 {
		fmt.Fprintln(c.stdout, "no jobs")
		return
	}
	tw := newTable(c.stdout)
	fmt.Fprintf(tw, "ID\t%s\tQUEUE\tKIND\tTRIES\tPROGRESS\tRUN AT\tFINISHED\tLAST ERROR\n", c.paintCell(bold, "STATE"))
	for _, j := range jobs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n",
			j.ID, c.paintCell(stateColor(j.State), string(j.State)), j.Queue, j.Kind,
			j.Attempt, j.MaxTries, progressCell(j.Progress), fmtTime(dueAt(j)), fmtTime(j.FinishedAt), orDash(oneLine(j.LastError, 60)))
	}
	tw.Flush()
}

// progressCell shows a job's progress in a table: "3/10", "3" when the
// total is not known, "-" for none.
func progressCell(p *litequeue.JobProgress) string {
	switch {
	case p == nil:
		return "-"
	case p.Total <= 0:
		return fmt.Sprint(p.Done)
	}
	return fmt.Sprintf("%d/%d", p.Done, p.Total)
}
