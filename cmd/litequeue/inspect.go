package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// states are the job states, in the order of their lives.
var states = []litequeue.State{
	litequeue.Pending, litequeue.Running, litequeue.Completed,
	litequeue.Dead, litequeue.Discarded, litequeue.Cancelled,
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
	return "", usageErrorf("unknown state %q (want pending, running, completed, dead, discarded or cancelled)", s)
}

// parseID checks a job ID argument.
func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-"):
		return 0, usageErrorf("job ID %s is over the largest, %d", s, int64(math.MaxInt64))
	case err != nil || id <= 0:
		return 0, usageErrorf("job ID %q is not a positive whole number", s)
	}
	return id, nil
}

// parseIDs checks every job ID argument.
func parseIDs(args []string) ([]int64, error) {
	ids := make([]int64, len(args))
	for i, a := range args {
		var err error
		if ids[i], err = parseID(a); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// list runs "list".
func (c *cli) list(ctx context.Context, args []string) error {
	const use = "list [--state S] [--queue Q] [--kind K] [--limit N] [--json]"
	fs := c.flagSet("list", use)
	state := fs.String("state", "", "only jobs in this `state`: pending, running, completed, dead, discarded or cancelled")
	queue := fs.String("queue", "", "only jobs on this `queue`")
	kind := fs.String("kind", "", "only jobs of this `kind`")
	limit := fs.Int("limit", 100, "show at most `N` jobs, oldest first; 0: all")
	asJSON := fs.Bool("json", false, "write JSON")
	_, err := fs.parse(args, 0, 0)
	if err != nil {
		return err
	}
	st, err := parseState(*state)
	if err != nil {
		return err
	}
	f := litequeue.Filter{State: st, Queue: *queue, Kind: *kind}
	jobs, more, err := c.listJobs(ctx, f, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(c.stdout, jobsJSON(jobs))
	}
	c.jobTable(jobs)
	c.moreNote(len(jobs), more)
	return nil
}

// listJobs lists the jobs f selects, at most limit of them (0: all), and
// reports whether there were more.
func (c *cli) listJobs(ctx context.Context, f litequeue.Filter, limit int) (jobs []*litequeue.Job, more bool, err error) {
	if limit < 0 {
		return nil, false, usageErrorf("--limit %d is negative", limit)
	}
	q, err := c.openRead()
	if err != nil {
		return nil, false, err
	}
	defer q.Close()
	if limit > 0 {
		f.Limit = limit + 1 // one more, to know whether there are more
	}
	if jobs, err = q.List(ctx, f); err != nil {
		return nil, false, err
	}
	if limit > 0 && len(jobs) > limit {
		return jobs[:limit], true, nil
	}
	return jobs, false, nil
}

// moreNote tells, on stderr, that a list stopped at its limit.
func (c *cli) moreNote(shown int, more bool) {
	if more {
		fmt.Fprintf(c.stderr, "(the first %d shown; --limit N shows more, --limit 0 all)\n", shown)
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
	fmt.Fprintf(tw, "ID\t%s\tQUEUE\tKIND\tTRIES\tRUN AT\tFINISHED\tLAST ERROR\n", c.paintCell(bold, "STATE"))
	for _, j := range jobs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n",
			j.ID, c.paintCell(stateColor(j.State), string(j.State)), j.Queue, j.Kind,
			j.Attempt, j.MaxTries, fmtTime(dueAt(j)), fmtTime(j.FinishedAt), orDash(oneLine(j.LastError, 60)))
	}
	tw.Flush()
}

// showJSON is the output of "show --json".
type showJSON struct {
	Job     jobJSON       `json:"job"`
	History []attemptJSON `json:"history"`
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

// show runs "show".
func (c *cli) show(ctx context.Context, args []string) error {
	const use = "show ID [--json]"
	fs := c.flagSet("show", use)
	asJSON := fs.Bool("json", false, "write JSON")
	pos, err := fs.parse(args, 1, 1)
	if err != nil {
		return err
	}
	id, err := parseID(pos[0])
	if err != nil {
		return err
	}
	q, err := c.openRead()
	if err != nil {
		return err
	}
	defer q.Close()
	job, err := q.Get(ctx, id)
	if errors.Is(err, litequeue.ErrNotFound) {
		return fmt.Errorf("no job %d in %s", id, c.dbPath())
	}
	if err != nil {
		return err
	}
	history, err := q.History(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		out := showJSON{Job: toJobJSON(job, true), History: make([]attemptJSON, len(history))}
		for i, a := range history {
			out.History[i] = attemptJSON{
				Attempt: a.Attempt, StartedAt: a.StartedAt.UTC(), FinishedAt: a.FinishedAt.UTC(),
				Outcome: a.Outcome, Error: a.Error, ErrorClass: a.ErrorClass,
				DelayMS: a.Delay.Milliseconds(), Worker: a.Worker,
			}
		}
		return writeJSON(c.stdout, out)
	}
	c.showJob(job)
	c.showHistory(job, history)
	return nil
}

// showJob writes a job's fields and payload.
func (c *cli) showJob(j *litequeue.Job) {
	tw := newTable(c.stdout)
	fmt.Fprintf(tw, "job\t%d\n", j.ID)
	fmt.Fprintf(tw, "state\t%s\n", c.paintCell(stateColor(j.State), string(j.State)))
	fmt.Fprintf(tw, "queue\t%s\n", j.Queue)
	fmt.Fprintf(tw, "kind\t%s\n", j.Kind)
	fmt.Fprintf(tw, "tries\t%d of %d\n", j.Attempt, j.MaxTries)
	fmt.Fprintf(tw, "priority\t%d\n", j.Priority)
	fmt.Fprintf(tw, "created\t%s\n", fmtTimeMS(j.CreatedAt))
	fmt.Fprintf(tw, "run at\t%s\n", fmtTimeMS(dueAt(j)))
	fmt.Fprintf(tw, "finished\t%s\n", fmtTimeMS(j.FinishedAt))
	fmt.Fprintf(tw, "unique key\t%s\n", orDash(j.UniqueKey))
	fmt.Fprintf(tw, "last error\t%s\n", orDash(oneLine(j.LastError, 200)))
	tw.Flush()
	fmt.Fprintln(c.stdout, "\npayload:")
	writePayload(c.stdout, j.Payload)
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
	case litequeue.OutcomeDiscarded, litequeue.OutcomeCancelled:
		return yellow
	}
	return red
}

// statsJSON is the output of "stats --json". Durations are in
// milliseconds.
type statsJSON struct {
	Queues          map[string]queueStatsJSON `json:"queues"`
	RetriesLastHour []errorCountJSON          `json:"retries_last_hour"`
	DeathsLastHour  map[string]int            `json:"deaths_last_hour"` // per kind
	// DeathsByClassLastHour is per kind and error class.
	DeathsByClassLastHour []errorCountJSON `json:"deaths_by_class_last_hour"`
}

// queueStatsJSON is one queue's counts in "stats --json".
type queueStatsJSON struct {
	Due         int    `json:"due"`
	Scheduled   int    `json:"scheduled"`
	Running     int    `json:"running"`
	Dead        int    `json:"dead"`
	Completed   int    `json:"completed"`
	Discarded   int    `json:"discarded"`
	Cancelled   int    `json:"cancelled"`
	OldestDueMS *int64 `json:"oldest_due_ms"` // null when none is due
}

// errorCountJSON is a count of retries or deaths in "stats --json".
type errorCountJSON struct {
	Kind       string `json:"kind"`
	ErrorClass string `json:"error_class"`
	Count      int    `json:"count"`
}

// stats runs "stats".
func (c *cli) stats(ctx context.Context, args []string) error {
	fs := c.flagSet("stats", "stats [--json]")
	asJSON := fs.Bool("json", false, "write JSON")
	_, err := fs.parse(args, 0, 0)
	if err != nil {
		return err
	}
	q, err := c.openRead()
	if err != nil {
		return err
	}
	defer q.Close()
	return c.showStats(ctx, q, *asJSON)
}

// showStats writes the figures of q's file, as tables or as JSON.
func (c *cli) showStats(ctx context.Context, q *litequeue.Queue, asJSON bool) error {
	st, err := q.Stats(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, toStatsJSON(st))
	}
	c.writeStats(st)
	return nil
}

// toStatsJSON returns the JSON form of st. It leaves out Unhandled: the
// command has no handlers, so every due kind would be in it.
func toStatsJSON(st litequeue.Stats) statsJSON {
	out := statsJSON{
		Queues:                make(map[string]queueStatsJSON, len(st.Queues)),
		RetriesLastHour:       errorCountsJSON(st.RetriesLastHour),
		DeathsLastHour:        st.DeathsLastHour,
		DeathsByClassLastHour: errorCountsJSON(st.DeathsByClassLastHour),
	}
	for name, s := range st.Queues {
		qs := queueStatsJSON{s.Due, s.Scheduled, s.Running, s.Dead, s.Completed, s.Discarded, s.Cancelled, nil}
		if s.Due > 0 {
			oldest := s.OldestDue.Milliseconds()
			qs.OldestDueMS = &oldest
		}
		out.Queues[name] = qs
	}
	if out.DeathsLastHour == nil {
		out.DeathsLastHour = map[string]int{}
	}
	return out
}

// errorCountsJSON is the JSON form of counts, never null.
func errorCountsJSON(counts []litequeue.ErrorCount) []errorCountJSON {
	out := make([]errorCountJSON, len(counts))
	for i, e := range counts {
		out[i] = errorCountJSON(e)
	}
	return out
}

// writeStats writes st as tables: the jobs of each queue by state, then
// the last hour's retries, and its deaths per kind and error class.
func (c *cli) writeStats(st litequeue.Stats) {
	w := c.stdout
	if len(st.Queues) == 0 {
		fmt.Fprintln(w, "no jobs")
	} else {
		tw := newTable(w)
		fmt.Fprintln(tw, "QUEUE\tDUE\tSCHEDULED\tRUNNING\tDEAD\tCOMPLETED\tDISCARDED\tCANCELLED\tOLDEST DUE")
		var all litequeue.QueueStats
		for _, name := range slices.Sorted(maps.Keys(st.Queues)) {
			s := st.Queues[name]
			writeQueueStats(tw, name, s)
			all.Due, all.Scheduled, all.Running, all.Dead = all.Due+s.Due, all.Scheduled+s.Scheduled, all.Running+s.Running, all.Dead+s.Dead
			all.Completed, all.Discarded, all.Cancelled = all.Completed+s.Completed, all.Discarded+s.Discarded, all.Cancelled+s.Cancelled
			all.OldestDue = max(all.OldestDue, s.OldestDue)
		}
		if len(st.Queues) > 1 {
			writeQueueStats(tw, "(all)", all)
		}
		tw.Flush()
	}

	writeErrorCounts(w, "retries", st.RetriesLastHour)
	writeErrorCounts(w, "deaths", st.DeathsByClassLastHour)
}

// writeErrorCounts writes the last hour's counts of what (retries or
// deaths) per kind and error class.
func writeErrorCounts(w io.Writer, what string, counts []litequeue.ErrorCount) {
	fmt.Fprintf(w, "\n%s in the last hour", what)
	if len(counts) == 0 {
		fmt.Fprintln(w, ": none")
		return
	}
	fmt.Fprintln(w, ":")
	tw := newTable(w)
	fmt.Fprintf(tw, "  KIND\tERROR CLASS\t%s\n", strings.ToUpper(what))
	for _, e := range counts {
		fmt.Fprintf(tw, "  %s\t%s\t%d\n", e.Kind, orDash(e.ErrorClass), e.Count)
	}
	tw.Flush()
}

// writeQueueStats writes one row of the stats table.
func writeQueueStats(w io.Writer, name string, s litequeue.QueueStats) {
	oldest := "-"
	if s.Due > 0 {
		oldest = fmtAge(s.OldestDue)
	}
	fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n",
		name, s.Due, s.Scheduled, s.Running, s.Dead, s.Completed, s.Discarded, s.Cancelled, oldest)
}
