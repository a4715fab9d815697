package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// showJSON is the output of "show --json".
type showJSON struct {
	Job          jobJSON          `json:"job"`
	History      []attemptJSON    `json:"history"`
	Dependencies []dependencyJSON `json:"dependencies"`
	Dependents   []dependencyJSON `json:"dependents"`
}

// attemptJSON is a row of a job's history in --json output.
type attemptJSON struct {
	Attempt    int               `json:"attempt"`
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt time.Time         `json:"finished_at"`
	Outcome    litequeue.Outcome `json:"outcome"`
	Error      string            `json:"error,omitempty"`
	ErrorClass string            `json:"error_class,omitempty"`
	DelayMS    int64             `json:"delay_ms"`
	Worker     string            `json:"worker,omitempty"`
}

// show defines the flags of "show" and returns the command.
func (c *cli) show(fs *flagSet) runFunc {
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, args []string) error {
		return c.readJob(args[0], func(q *litequeue.Queue, id int64) error {
			job, err := q.Get(ctx, id)
			if err != nil {
				return err
			}
			history, err := q.History(ctx, id)
			if err != nil {
				return err
			}
			deps, dependents, err := jobEdges(ctx, q, id)
			if err != nil {
				return err
			}
			if *asJSON {
				out := toShowJSON(job, history)
				out.Dependencies, out.Dependents = toDependenciesJSON(deps), toDependenciesJSON(dependents)
				return writeJSON(c.stdout, out)
			}
			c.showJob(job)
			c.showDependencies(deps, dependents)
			c.showHistory(job, history)
			return nil
		})
	}
}

// readJob runs fn on the database, opened read-only, with the job ID that
// arg is; fn's ErrNotFound is an error that names the ID and the database.
func (c *cli) readJob(arg string, fn func(q *litequeue.Queue, id int64) error) error {
	id, err := parseID(arg)
	if err != nil {
		return err
	}
	return c.read(func(q *litequeue.Queue) error {
		err := fn(q, id)
		if errors.Is(err, litequeue.ErrNotFound) {
			return fmt.Errorf("no job %d in %s", id, c.dbName())
		}
		return err
	})
}

// toShowJSON returns the JSON form of a job, with its output and
// checkpoint, and its history.
func toShowJSON(job *litequeue.Job, history []litequeue.Attempt) showJSON {
	out := showJSON{Job: toJobJSON(job, true), History: make([]attemptJSON, len(history))}
	out.Job.Output, out.Job.OutputBase64 = jsonOrBase64(job.Output)
	out.Job.Checkpoint, out.Job.CheckpointBase64 = jsonOrBase64(job.Checkpoint)
	for i, a := range history {
		out.History[i] = attemptJSON{
			Attempt: a.Attempt, StartedAt: a.StartedAt.UTC(), FinishedAt: a.FinishedAt.UTC(),
			Outcome: a.Outcome, Error: a.Error, ErrorClass: a.ErrorClass,
			DelayMS: a.Delay.Milliseconds(), Worker: a.Worker,
		}
	}
	return out
}

// showJob writes a job's fields, payload, output and checkpoint.
func (c *cli) showJob(j *litequeue.Job) {
	tw := newTable(c.stdout)
	fmt.Fprintf(tw, "job\t%d\n", j.ID)
	fmt.Fprintf(tw, "state\t%s\n", c.paintCell(stateColor(j.State), string(j.State)))
	fmt.Fprintf(tw, "queue\t%s\n", j.Queue)
	fmt.Fprintf(tw, "kind\t%s\n", j.Kind)
	fmt.Fprintf(tw, "tries\t%d of %d\n", j.Attempt, j.MaxTries)
	if p := j.Progress; p != nil {
		fmt.Fprintf(tw, "progress\t%s at %s\n", p, fmtTimeMS(p.At))
	}
	fmt.Fprintf(tw, "priority\t%d\n", j.Priority)
	fmt.Fprintf(tw, "created\t%s\n", fmtTimeMS(j.CreatedAt))
	fmt.Fprintf(tw, "run at\t%s\n", fmtTimeMS(dueAt(j)))
	fmt.Fprintf(tw, "finished\t%s\n", fmtTimeMS(j.FinishedAt))
	if !j.ExpiresAt.IsZero() {
		fmt.Fprintf(tw, "expires\t%s\n", fmtTimeMS(j.ExpiresAt))
	}
	fmt.Fprintf(tw, "unique key\t%s\n", orDash(j.UniqueKey))
	fmt.Fprintf(tw, "last error\t%s\n", orDash(oneLine(j.LastError, 200)))
	tw.Flush()
	fmt.Fprintln(c.stdout, "\npayload:")
	if !c.writeSealed(j) {
		writePayload(c.stdout, j.Payload)
	}
	for _, v := range []struct {
		name  string
		value []byte
	}{{"output", j.Output}, {"checkpoint", j.Checkpoint}} {
		if v.value != nil {
			fmt.Fprintf(c.stdout, "\n%s:\n", v.name)
			writePayload(c.stdout, v.value)
		}
	}
}

// writePayload writes a payload indented: JSON pretty-printed, anything
// else quoted.
func writePayload(w io.Writer, p []byte) {
	var b bytes.Buffer
	if err := json.Indent(&b, p, "  ", "  "); err == nil && len(p) > 0 {
		fmt.Fprintf(w, "  %s\n", b.Bytes())
		return
	}
	fmt.Fprintf(w, "  %q (not JSON)\n", p)
}

// showHistory writes a job's history as a table, then the full text of
// the errors that the table cuts short.
func (c *cli) showHistory(job *litequeue.Job, history []litequeue.Attempt) {
	fmt.Fprintf(c.stdout, "\nhistory (%s, oldest first):\n", plural(len(history), "row"))
	if len(history) == 0 {
		fmt.Fprintln(c.stdout, "  none: the job has not run")
		return
	}
	tw := newTable(c.stdout)
	fmt.Fprintf(tw, "  TRY\tSTARTED\tTOOK\t%s\tDELAY\tWORKER\tERROR CLASS\tERROR\n", c.paintCell(bold, "OUTCOME"))
	var long []int
	for i, a := range history {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			a.Attempt, fmtTimeMS(a.StartedAt), fmtAge(a.FinishedAt.Sub(a.StartedAt)),
			c.paintCell(outcomeColor(a.Outcome), string(a.Outcome)), delayCell(job, history, i),
			orDash(a.Worker), orDash(a.ErrorClass), orDash(oneLine(a.Error, 80)))
		if oneLine(a.Error, 80) != strings.TrimSpace(a.Error) {
			long = append(long, i)
		}
	}
	tw.Flush()
	for _, i := range long {
		a := history[i]
		fmt.Fprintf(c.stdout, "\nerror of try %d (%s):\n", a.Attempt, fmtTimeMS(a.StartedAt))
		for line := range strings.Lines(a.Error) {
			fmt.Fprintf(c.stdout, "  %s", strings.TrimRight(line, "\n")+"\n")
		}
	}
}

// delayCell shows the wait chosen after row i of a job's history: for a
// failure that was retried, or a snooze, the delay, even 0s; else "-".
func delayCell(job *litequeue.Job, history []litequeue.Attempt, i int) string {
	switch history[i].Outcome {
	case litequeue.OutcomeFailed, litequeue.OutcomePanicked, litequeue.OutcomeTimedOut,
		litequeue.OutcomeLeaseExpired, litequeue.OutcomeSnoozed:
	default:
		return "-"
	}
	var again bool
	if i+1 < len(history) {
		again = history[i+1].Outcome != litequeue.OutcomeReplayed
	} else {
		again = job.State == litequeue.Pending || job.State == litequeue.Running
	}
	if !again {
		return "-" // the job died, or was cancelled, after this run
	}
	return history[i].Delay.String()
}

// outcomeColor is the colour of a run's outcome.
func outcomeColor(o litequeue.Outcome) string {
	switch o {
	case litequeue.OutcomeCompleted:
		return green
	case litequeue.OutcomeReplayed, litequeue.OutcomeSnoozed, litequeue.OutcomeRunNow:
		return blue
	case litequeue.OutcomeDiscarded, litequeue.OutcomeCancelled, litequeue.OutcomeExpired:
		return yellow
	}
	return red
}
