package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// dead runs "dead list", "dead retry" and "dead purge".
func (c *cli) dead(ctx context.Context, args []string) error {
	const use = "dead list|retry|purge ..."
	if len(args) == 0 {
		return &exitError{code: exitUsage, err: fmt.Errorf("dead needs a command: list, retry or purge"), hint: use}
	}
	switch args[0] {
	case "list":
		return c.deadList(ctx, args[1:])
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
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := fs.want(pos, 0, 0); err != nil {
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
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "ID\tQUEUE\tKIND\tTRIES\tDIED\tLAST ERROR")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d\t%s\t%s\n", j.ID, j.Queue, j.Kind, j.Attempt, j.MaxTries,
			fmtTime(j.FinishedAt), orDash(oneLine(j.LastError, 80)))
	}
	tw.Flush()
	c.moreNote(len(jobs), more)
	return nil
}
