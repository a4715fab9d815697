package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/litequeue/litequeue"
)

// enqueue defines the flags of "enqueue" and returns the command.
func (c *cli) enqueue(fs *flagSet) runFunc {
	queue := fs.String("queue", litequeue.DefaultQueue, "the `queue` to put the job on")
	delay := fs.durationFlag("delay", 0, "make the job due this long from now")
	priority := fs.Int("priority", 0, "the job's `priority`: higher runs first")
	unique := fs.String("unique", "", "a unique `key`: while a live job holds it, nothing is added")
	maxTries := fs.Int("max-tries", 0, "the job's own `N` of tries, 1…50; 0: its handler's policy")
	after := fs.String("after", "", "the `IDs`, comma-separated, of jobs the job waits for: it runs once they completed")
	ifFailed := fs.String("if-failed", "", "what a failed job of --after does to the job: `cancel` (default), wait or run")
	asJSON := fs.Bool("json", false, "write the job as JSON")
	return func(ctx context.Context, args []string) error {
		kind, payload := args[0], json.RawMessage("null")
		if len(args) == 2 {
			if err := json.Unmarshal([]byte(args[1]), new(json.RawMessage)); err != nil {
				return usageErrorf("payload %s is not valid JSON: %v", quoteStart(args[1]), jsonError(err))
			}
			payload = json.RawMessage(args[1])
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
		deps, err := dependencyOptions(*after, *ifFailed)
		if err != nil {
			return err
		}
		return c.addJob(ctx, kind, payload, append(opts, deps...), *asJSON)
	}
}

// dependencyOptions are the options of --after (IDs, comma-separated)
// and --if-failed (a rule), or a usage error naming the bad value.
func dependencyOptions(after, ifFailed string) ([]litequeue.EnqueueOption, error) {
	rule := litequeue.DependencyRule(ifFailed)
	switch {
	case after == "" && ifFailed != "":
		return nil, usageErrorf("--if-failed %s without --after", ifFailed)
	case after == "":
		return nil, nil
	case ifFailed != "" && rule != litequeue.CancelIfFailed && rule != litequeue.WaitIfFailed && rule != litequeue.RunIfFailed:
		return nil, usageErrorf("--if-failed %q is not one of cancel, wait, run", ifFailed)
	}
	var ids []int64
	for _, f := range strings.Split(after, ",") {
		id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || id < 1 {
			return nil, usageErrorf("--after %q: %q is not a job ID", after, f)
		}
		ids = append(ids, id)
	}
	return []litequeue.EnqueueOption{litequeue.DependsOnRule(rule, ids...)}, nil
}

// addJob enqueues a job, through the write path, and says what happened.
func (c *cli) addJob(ctx context.Context, kind string, payload json.RawMessage, opts []litequeue.EnqueueOption, asJSON bool) error {
	q, err := c.openWrite()
	if err != nil {
		return err
	}
	defer q.Close()
	job, err := q.Enqueue(ctx, kind, payload, opts...)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, struct {
			jobJSON
			Duplicate bool `json:"duplicate"`
		}{toJobJSON(job, true), job.Duplicate})
	}
	if job.Duplicate {
		fmt.Fprintf(c.stdout, "job %d already holds unique key %q and is %s: nothing added\n", job.ID, job.UniqueKey, job.State)
		return nil
	}
	switch job.State {
	case litequeue.Waiting:
		fmt.Fprintf(c.stdout, "enqueued job %d: %s on queue %s, waiting for its dependencies%s\n", job.ID, job.Kind, job.Queue, sealNote(job))
	case litequeue.Cancelled:
		fmt.Fprintf(c.stdout, "enqueued job %d: %s on queue %s, cancelled at once: %s\n", job.ID, job.Kind, job.Queue, job.LastError)
	default:
		fmt.Fprintf(c.stdout, "enqueued job %d: %s on queue %s, due %s%s\n", job.ID, job.Kind, job.Queue, fmtTimeMS(job.RunAt), sealNote(job))
	}
	return nil
}

// quoteStart quotes s for a message: whole if it is short, else its first
// 30 bytes or so, and its length.
func quoteStart(s string) string {
	const n = 30
	for i := range s {
		if i >= n {
			return fmt.Sprintf("%q… (%d bytes)", s[:i], len(s))
		}
	}
	return strconv.Quote(s)
}

// jsonError is err, from decoding JSON, with the byte it stopped at.
func jsonError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d)", err, se.Offset)
	}
	return err.Error()
}
