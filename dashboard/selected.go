package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/litequeue/litequeue"
)

// The jobs list's rows can be selected, each by a checkbox that names its
// ID in the form under the list, and acted on together: cancelled, run
// now, replayed or deleted. The form names the jobs one by one, so there
// is nothing to count again before acting, as "Replay every match" does
// for a filter: each job is acted on as the library allows, and the page
// says which were refused and why.

// selectedActions are the actions on the selected jobs, by the form's
// action field: what they do, and how the result page says it.
var selectedActions = map[string]struct {
	act  func(*litequeue.Queue) func(context.Context, int64) error
	done string
}{
	"cancel":  {func(q *litequeue.Queue) func(context.Context, int64) error { return q.Cancel }, "Cancelled"},
	"run-now": {func(q *litequeue.Queue) func(context.Context, int64) error { return q.RunNow }, "Made due now"},
	"replay":  {func(q *litequeue.Queue) func(context.Context, int64) error { return q.Replay }, "Replayed"},
	"delete":  {func(q *litequeue.Queue) func(context.Context, int64) error { return q.Delete }, "Deleted"},
}

// selected serves POST /jobs/selected: the form's action on each job its
// id fields name, at most a page of them.
func (h *handler) selected(w http.ResponseWriter, r *http.Request) {
	a, ok := selectedActions[r.PostForm.Get("action")]
	if !ok {
		h.problem(w, badRequest("action=%q is none of cancel, run-now, replay, delete", r.PostForm.Get("action")))
		return
	}
	ids, err := selectedIDs(r.PostForm["id"])
	if err != nil {
		h.problem(w, err)
		return
	}
	if r.PostForm.Get("action") == "delete" && r.PostForm.Get("confirmed") != "yes" {
		h.confirmDelete(w, ids)
		return
	}
	act := a.act(h.q)
	var done int
	var refusals []string
	for _, id := range ids {
		err := act(r.Context(), id)
		switch {
		case err == nil:
			done++
		case errors.Is(err, litequeue.ErrClosed) || r.Context().Err() != nil:
			h.fail(w, fmt.Errorf("%s %d of %d selected jobs, then: %w", a.done, done, len(ids), err))
			return
		default:
			refusals = append(refusals, err.Error())
		}
	}
	msg := fmt.Sprintf("%s: %d of %d selected %s.", a.done, done, len(ids), plural(len(ids), "job", "jobs"))
	if len(refusals) > 0 {
		msg += " Refused: " + strings.Join(refusals, "; ") + "."
	}
	h.render(w, http.StatusOK, "message", map[string]any{"Title": a.done, "Message": msg})
}

// selectedIDs reads the IDs of the selected jobs: at least one, at most a
// page of them.
func selectedIDs(vals []string) ([]int64, error) {
	if len(vals) == 0 {
		return nil, badRequest("no job selected: tick the jobs to act on")
	}
	if len(vals) > pageSize {
		return nil, badRequest("%d jobs selected: at most %d (a page) at once", len(vals), pageSize)
	}
	ids := make([]int64, len(vals))
	for i, v := range vals {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return nil, badRequest("id=%q is not a job ID (a whole number, 1 or more)", v)
		}
		ids[i] = id
	}
	return ids, nil
}

// confirmDelete answers a delete of the selected jobs ids that the form
// did not confirm: a page that names them and asks, with the form that
// deletes them.
func (h *handler) confirmDelete(w http.ResponseWriter, ids []int64) {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.FormatInt(id, 10)
	}
	jobs := plural(len(ids), "job", "jobs")
	h.ask(w, http.StatusOK, confirmPage{
		Title: "Delete selected jobs",
		Ask: fmt.Sprintf("Delete %d selected %s (%s) and their history for good? This cannot be undone. "+
			"Only finished and dead jobs are deleted: a pending or running one is refused.", len(ids), jobs, strings.Join(names, ", ")),
		Button: fmt.Sprintf("Delete %d %s", len(ids), jobs),
		Action: "/jobs/selected",
		Fields: map[string]string{"action": "delete", "confirmed": "yes"},
		IDs:    names,
		Back:   "/jobs",
	})
}
