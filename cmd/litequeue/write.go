package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/litequeue/litequeue"
)

// enqueue runs "enqueue".
func (c *cli) enqueue(ctx context.Context, args []string) error {
	const use = "enqueue KIND [JSON] [--queue Q] [--delay D] [--priority P] [--unique KEY] [--max-tries N] [--json]"
	fs := c.flagSet("enqueue", use)
	queue := fs.String("queue", litequeue.DefaultQueue, "the `queue` to put the job on")
	delay := durationFlag(fs.FlagSet, "delay", 0, "make the job due this long from now")
	priority := fs.Int("priority", 0, "the job's `priority`: higher runs first")
	unique := fs.String("unique", "", "a unique `key`: while a live job holds it, nothing is added")
	maxTries := fs.Int("max-tries", 0, "the job's own `N` of tries, 1…50; 0: its handler's policy")
	asJSON := fs.Bool("json", false, "write the job as JSON")
	pos, err := fs.parse(args, 1, 2)
	if err != nil {
		return err
	}
	kind, payload := pos[0], json.RawMessage("null")
	if len(pos) == 2 {
		if !json.Valid([]byte(pos[1])) {
			return usageErrorf("payload %q is not valid JSON", pos[1])
		}
		payload = json.RawMessage(pos[1])
	}
	switch {
	case kind == "":
		return usageErrorf("the kind is empty")
	case *queue == "":
		return usageErrorf("--queue is empty")
	case *maxTries != 0 && (*maxTries < 1 || *maxTries > litequeue.MaxTriesLimit):
		return usageErrorf("--max-tries %d is outside 1…%d", *maxTries, litequeue.MaxTriesLimit)
	}
	opts := []litequeue.EnqueueOption{litequeue.OnQueue(*queue), litequeue.Delay(*delay), litequeue.Priority(*priority)}
	if *unique != "" {
		opts = append(opts, litequeue.UniqueKey(*unique))
	}
	if *maxTries != 0 {
		opts = append(opts, litequeue.MaxTries(*maxTries))
	}
	q, err := c.openWrite()
	if err != nil {
		return err
	}
	defer q.Close()
	job, err := q.Enqueue(ctx, kind, payload, opts...)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(c.stdout, struct {
			jobJSON
			Duplicate bool `json:"duplicate"`
		}{toJobJSON(job, true), job.Duplicate})
	}
	if job.Duplicate {
		fmt.Fprintf(c.stdout, "job %d already holds unique key %q and is %s: nothing added\n", job.ID, job.UniqueKey, job.State)
		return nil
	}
	fmt.Fprintf(c.stdout, "enqueued job %d: %s on queue %s, due %s\n", job.ID, job.Kind, job.Queue, fmtTimeMS(job.RunAt))
	return nil
}

// cancel runs "cancel".
func (c *cli) cancel(ctx context.Context, args []string) error {
	fs := c.flagSet("cancel", "cancel ID...")
	pos, err := fs.parse(args, 1, -1)
	if err != nil {
		return err
	}
	ids, err := parseIDs(pos)
	if err != nil {
		return err
	}
	return c.eachJob(ctx, ids, c.openWrite, func(q *litequeue.Queue, id int64) error {
		if err := q.Cancel(ctx, id); err != nil {
			return err
		}
		j, err := q.Get(ctx, id)
		switch {
		case err != nil:
			return err
		case j.State == litequeue.Running:
			fmt.Fprintf(c.stdout, "job %d is running: its worker cancels it at its next lease renewal\n", id)
		default:
			fmt.Fprintf(c.stdout, "cancelled job %d\n", id)
		}
		return nil
	})
}
