package dashboard

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/litequeue/litequeue"
)

// pageSize is how many jobs a page of the jobs list shows.
const pageSize = 50

// queueRow is one queue's line of the overview.
type queueRow struct {
	Name string
	litequeue.QueueStats
}

// Finished counts the queue's completed, discarded, cancelled and expired
// jobs.
func (r queueRow) Finished() int { return r.Completed + r.Discarded + r.Cancelled + r.Expired }

// failureRow is one (kind, error class) line of the overview's last hour.
type failureRow struct {
	Kind, ErrorClass string
	Retries, Deaths  int
}

// overview serves GET /: the queues, the last hour's failures and their chart.
func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	stats, err := h.q.Stats(ctx)
	if err != nil {
		h.fail(w, err)
		return
	}
	failures, err := h.q.FailuresLastHour(ctx)
	if err != nil {
		h.fail(w, err)
		return
	}
	var queues []queueRow
	for name, qs := range stats.Queues {
		queues = append(queues, queueRow{name, qs})
	}
	slices.SortFunc(queues, func(a, b queueRow) int { return cmp.Compare(a.Name, b.Name) })
	data := map[string]any{
		"Title":     "Overview",
		"Refresh":   true,
		"Queues":    queues,
		"Unhandled": stats.Unhandled,
		"Failures":  failureRows(failures),
		"Chart":     failureChart(failures, h.opts.Clock.Now()),
	}
	if err := h.flowData(ctx, stats, data); err != nil {
		h.fail(w, err)
		return
	}
	if err := h.workersData(ctx, data); err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "overview", data)
}

// failureRows adds up the minutes of each kind and error class, the most
// failures first.
func failureRows(counts []litequeue.FailureCount) []failureRow {
	type key struct{ kind, class string }
	sums := map[key]*failureRow{}
	var rows []*failureRow
	for _, c := range counts {
		k := key{c.Kind, c.ErrorClass}
		if sums[k] == nil {
			sums[k] = &failureRow{Kind: c.Kind, ErrorClass: c.ErrorClass}
			rows = append(rows, sums[k])
		}
		sums[k].Retries += c.Retries
		sums[k].Deaths += c.Deaths
	}
	out := make([]failureRow, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	slices.SortStableFunc(out, func(a, b failureRow) int {
		return cmp.Or(cmp.Compare(b.Retries+b.Deaths, a.Retries+a.Deaths), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ErrorClass, b.ErrorClass))
	})
	return out
}

// listQuery is the jobs list's filter as the URL gives it.
type listQuery struct {
	State, Queue, Kind, Error string
	Key, Meta                 string // the unique key, and a metadata key=value
	Before, After             int64
}

// filter returns the library's filter for the query, without cursor.
func (lq listQuery) filter() litequeue.Filter {
	f := litequeue.Filter{State: litequeue.State(lq.State), Queue: lq.Queue, Kind: lq.Kind, ErrorContains: lq.Error, UniqueKey: lq.Key}
	if k, v, ok := strings.Cut(lq.Meta, "="); ok {
		f.Metadata = map[string]string{k: v}
	}
	return f
}

// parseList reads the jobs list's query parameters.
func parseList(r *http.Request) (listQuery, error) {
	v := r.URL.Query()
	lq := listQuery{State: v.Get("state"), Queue: v.Get("queue"), Kind: v.Get("kind"), Error: v.Get("error"),
		Key: v.Get("key"), Meta: v.Get("meta")}
	if lq.State != "" && !slices.Contains(states, litequeue.State(lq.State)) {
		return lq, badRequest("state=%q is none of %v", lq.State, states)
	}
	if k, _, ok := strings.Cut(lq.Meta, "="); lq.Meta != "" && (!ok || k == "") {
		return lq, badRequest("meta=%q is not a metadata key=value", lq.Meta)
	}
	for name, dst := range map[string]*int64{"before": &lq.Before, "after": &lq.After} {
		if s := v.Get(name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				return lq, badRequest("%s=%q is not a job ID (a whole number, 0 or more)", name, s)
			}
			*dst = n
		}
	}
	return lq, nil
}

// jobs serves GET /jobs: a page of the jobs that match the query, newest
// first, from the cursor in before or after.
func (h *handler) jobs(w http.ResponseWriter, r *http.Request) {
	if h.searchID(w, r) {
		return
	}
	lq, err := parseList(r)
	if err != nil {
		h.problem(w, err)
		return
	}
	f := lq.filter()
	f.Limit = pageSize + 1 // one more tells whether there is another page
	if lq.After > 0 {      // the page above a cursor, read upwards, shown newest first
		f.After = lq.After
	} else {
		f.Before, f.Desc = lq.Before, true
	}
	jobs, err := h.q.List(r.Context(), f)
	if err != nil {
		h.fail(w, err)
		return
	}
	more := len(jobs) > pageSize
	if more {
		jobs = jobs[:pageSize]
	}
	newer, older := lq.Before > 0, more // the links to show
	if !f.Desc {
		newer, older = more, true
	}
	if !f.Desc {
		slices.Reverse(jobs)
	}
	title := "Jobs"
	if lq.State == string(litequeue.Dead) {
		title = "Dead letters"
	}
	data := map[string]any{"Title": title, "Query": lq, "Jobs": jobs, "States": states, "Writes": h.opts.AllowWrites,
		"CSRF": h.csrf, "Refresh": true}
	if len(jobs) > 0 {
		if newer {
			data["Newer"] = jobs[0].ID
		}
		if older {
			data["Older"] = jobs[len(jobs)-1].ID
		}
	}
	h.render(w, http.StatusOK, "jobs", data)
}

// states are the states the jobs list filters by.
var states = []litequeue.State{litequeue.Waiting, litequeue.Pending, litequeue.Running, litequeue.Dead,
	litequeue.Completed, litequeue.Discarded, litequeue.Cancelled, litequeue.Expired}

// getJob reads job id for a page; it answers 404 for a job that is not
// there, 500 for a read that failed, and reports false then.
func (h *handler) getJob(w http.ResponseWriter, r *http.Request, id int64) (*litequeue.Job, bool) {
	job, err := h.q.Get(r.Context(), id)
	if errors.Is(err, litequeue.ErrNotFound) {
		h.problem(w, notFound("no job %d (it may have been purged)", id))
		return nil, false
	}
	if err != nil {
		h.fail(w, err)
		return nil, false
	}
	return job, true
}

// job serves GET /jobs/{id}: the job, its payload and its whole history.
func (h *handler) job(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		h.problem(w, notFound("no job %q: a job's ID is a whole number", r.PathValue("id")))
		return
	}
	job, ok := h.getJob(w, r, id)
	if !ok {
		return
	}
	history, err := h.q.History(r.Context(), id)
	if err != nil {
		h.fail(w, err)
		return
	}
	data := map[string]any{
		"Title":      "Job " + strconv.FormatInt(id, 10),
		"Job":        job,
		"Payload":    h.payload(job),
		"Output":     h.saved(job, job.Output),
		"Checkpoint": h.saved(job, job.Checkpoint),
		"History":    history,
		"Writes":     h.opts.AllowWrites,
		"CSRF":       h.csrf,
	}
	run, running, err := h.q.CurrentRun(r.Context(), id)
	if err != nil && !errors.Is(err, litequeue.ErrNotFound) { // a job deleted meanwhile is shown as read
		h.fail(w, err)
		return
	}
	if running {
		data["Run"] = run
	}
	if data["Edges"], err = h.jobEdges(r.Context(), id); err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "job", data)
}
