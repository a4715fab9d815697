package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/litequeue/litequeue"
)

// problemError is a request the dashboard refuses, with the status to
// answer and a message for the person who made it.
type problemError struct {
	status int
	msg    string
}

func (e *problemError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &problemError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) error {
	return &problemError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// problem answers a refused request with a page that says why, or a
// plain 500 for an error that is not a *problemError.
func (h *handler) problem(w http.ResponseWriter, err error) {
	var p *problemError
	if !errors.As(err, &p) {
		h.fail(w, err)
		return
	}
	h.render(w, p.status, "message", map[string]any{"Title": http.StatusText(p.status), "Message": p.msg})
}

// jobID reads the {id} of the path.
func jobID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return 0, notFound("no job %q: a job's ID is a whole number", r.PathValue("id"))
	}
	return id, nil
}

// replay serves POST /jobs/{id}/replay, then shows the job.
func (h *handler) replay(w http.ResponseWriter, r *http.Request) {
	h.jobAction(w, r, h.q.Replay)
}

// cancel serves POST /jobs/{id}/cancel, then shows the job.
func (h *handler) cancel(w http.ResponseWriter, r *http.Request) {
	h.jobAction(w, r, h.q.Cancel)
}

// jobAction runs act on the job of the path and sends the browser to the
// job's page; a refusal (not dead, already finished, no such job) is shown
// with the library's message.
func (h *handler) jobAction(w http.ResponseWriter, r *http.Request, act func(ctx context.Context, id int64) error) {
	id, err := jobID(r)
	if err != nil {
		h.problem(w, err)
		return
	}
	if err := act(r.Context(), id); err != nil {
		status := http.StatusConflict
		if errors.Is(err, litequeue.ErrNotFound) {
			status = http.StatusNotFound
		}
		h.opts.Logger.Info("litequeue dashboard: refused", "path", r.URL.Path, "err", err)
		h.problem(w, &problemError{status, err.Error()})
		return
	}
	http.Redirect(w, r, h.opts.Prefix+"/jobs/"+strconv.FormatInt(id, 10), http.StatusSeeOther)
}

// deadFilter reads the filter of dead jobs that a replay-all form gives.
func deadFilter(v url.Values) litequeue.Filter {
	return litequeue.Filter{State: litequeue.Dead, Queue: v.Get("queue"), Kind: v.Get("kind"), ErrorContains: v.Get("error")}
}

// confirmReplay serves GET /dead/replay: how many dead jobs the filter
// matches, and a form to replay them.
func (h *handler) confirmReplay(w http.ResponseWriter, r *http.Request) {
	h.askReplay(w, r, deadFilter(r.URL.Query()), http.StatusOK, "")
}

// askReplay counts the dead jobs of f and answers with status and a
// form to replay those counted: the tally, to be given back. changed, if
// any, says why it asks again.
func (h *handler) askReplay(w http.ResponseWriter, r *http.Request, f litequeue.Filter, status int, changed string) {
	t, err := h.q.TallyReplay(r.Context(), f)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.confirm(w, status, t, map[string]any{
		"Title":   "Replay dead jobs",
		"Action":  "/dead/replay",
		"Changed": changed,
		"Ask":     fmt.Sprintf("Replay %d dead %s%s?", t.Jobs, plural(t.Jobs, "job", "jobs"), describeFilter(f)),
		"Button":  fmt.Sprintf("Replay %d", t.Jobs),
		"Fields":  map[string]string{"queue": f.Queue, "kind": f.Kind, "error": f.ErrorContains},
	})
}

// replayDead serves POST /dead/replay: replays the dead jobs of the filter
// that the form's tally counted, or asks again if they are no longer as
// many.
func (h *handler) replayDead(w http.ResponseWriter, r *http.Request) {
	f := deadFilter(r.PostForm)
	t, err := formTally(r.PostForm)
	if err != nil {
		h.problem(w, err)
		return
	}
	n, err := h.q.ReplayTallied(r.Context(), f, t)
	if te, ok := errors.AsType[*litequeue.TallyError](err); ok {
		h.askReplay(w, r, f, http.StatusConflict, changedSince(te, "replayed"))
		return
	}
	if err != nil {
		h.fail(w, fmt.Errorf("replayed %d, then: %w", n, err))
		return
	}
	h.render(w, http.StatusOK, "message", map[string]any{"Title": "Replayed",
		"Message": fmt.Sprintf("Replayed %d dead %s%s: they are pending, due now.", n, plural(n, "job", "jobs"), describeFilter(f))})
}

// purgeAge reads the age of a purge form, in litequeue's duration syntax.
func purgeAge(v url.Values) (time.Duration, error) {
	s := v.Get("older")
	d, err := litequeue.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, badRequest("older=%q is not an age such as 7d or 12h", s)
	}
	return d, nil
}

// confirmPurge serves GET /dead/purge: how many dead jobs are older than
// the age, and a form to delete them.
func (h *handler) confirmPurge(w http.ResponseWriter, r *http.Request) {
	d, err := purgeAge(r.URL.Query())
	if err != nil {
		h.problem(w, err)
		return
	}
	h.askPurge(w, r, d, http.StatusOK, "")
}

// askPurge counts the jobs dead for d or more and answers with status and
// a form to delete those counted, as askReplay does.
func (h *handler) askPurge(w http.ResponseWriter, r *http.Request, d time.Duration, status int, changed string) {
	t, err := h.q.TallyPurge(r.Context(), d)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.confirm(w, status, t, map[string]any{
		"Title":   "Purge dead jobs",
		"Action":  "/dead/purge",
		"Changed": changed,
		"Ask": fmt.Sprintf("Delete %d %s dead for %s or more, with %s history? This cannot be undone.",
			t.Jobs, plural(t.Jobs, "job", "jobs"), litequeue.FormatDuration(d), plural(t.Jobs, "its", "their")),
		"Button": fmt.Sprintf("Delete %d", t.Jobs),
		"Fields": map[string]string{"older": litequeue.FormatDuration(d)},
	})
}

// purgeDead serves POST /dead/purge: deletes the jobs dead for the age
// that the form's tally counted, or asks again if they are no longer as
// many.
func (h *handler) purgeDead(w http.ResponseWriter, r *http.Request) {
	d, err := purgeAge(r.PostForm)
	if err != nil {
		h.problem(w, err)
		return
	}
	t, err := formTally(r.PostForm)
	if err != nil {
		h.problem(w, err)
		return
	}
	n, err := h.q.PurgeTallied(r.Context(), d, t)
	if te, ok := errors.AsType[*litequeue.TallyError](err); ok {
		h.askPurge(w, r, d, http.StatusConflict, changedSince(te, "deleted"))
		return
	}
	if err != nil {
		h.fail(w, fmt.Errorf("purged %d, then: %w", n, err))
		return
	}
	h.render(w, http.StatusOK, "message", map[string]any{"Title": "Purged",
		"Message": fmt.Sprintf("Deleted %d dead %s, dead for %s or more.", n, plural(n, "job", "jobs"), litequeue.FormatDuration(d))})
}

// confirm renders the confirmation of a bulk action, data, for the jobs
// that t counted; its form carries t.
func (h *handler) confirm(w http.ResponseWriter, status int, t litequeue.Tally, data map[string]any) {
	fields := data["Fields"].(map[string]string)
	fields["jobs"] = strconv.Itoa(t.Jobs)
	fields["max"] = strconv.FormatInt(t.MaxID, 10)
	data["None"] = t.Jobs == 0
	data["Writes"] = h.opts.AllowWrites
	data["CSRF"] = h.csrf
	h.render(w, status, "confirm", data)
}

// formTally reads the tally that a bulk action's form carries: what the
// person confirmed.
func formTally(v url.Values) (litequeue.Tally, error) {
	jobs, err := strconv.Atoi(v.Get("jobs"))
	if err != nil || jobs < 0 {
		return litequeue.Tally{}, badRequest("jobs=%q is not the count of jobs you confirmed (reload the confirmation)", v.Get("jobs"))
	}
	maxID, err := strconv.ParseInt(v.Get("max"), 10, 64)
	if err != nil || maxID < 0 {
		return litequeue.Tally{}, badRequest("max=%q is not the highest job ID you confirmed (reload the confirmation)", v.Get("max"))
	}
	return litequeue.Tally{Jobs: jobs, MaxID: maxID}, nil
}

// changedSince says that the jobs changed between the count and the act,
// which did nothing (done: "replayed", "deleted").
func changedSince(te *litequeue.TallyError, done string) string {
	return fmt.Sprintf("The dead jobs changed after they were counted: %d match now, not the %d counted. Nothing was %s; here is the new count.",
		te.Got, te.Want, done)
}

// describeFilter says what a filter of dead jobs selects, after "jobs".
func describeFilter(f litequeue.Filter) string {
	var s string
	if f.Queue != "" {
		s += fmt.Sprintf(" on queue %q", f.Queue)
	}
	if f.Kind != "" {
		s += fmt.Sprintf(" of kind %q", f.Kind)
	}
	if f.ErrorContains != "" {
		s += fmt.Sprintf(" whose error contains %q", f.ErrorContains)
	}
	return s
}

// plural returns one or many for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
