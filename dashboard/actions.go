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
	f := deadFilter(r.URL.Query())
	n, err := h.q.Count(r.Context(), f)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "confirm", map[string]any{
		"Title":  "Replay dead jobs",
		"Action": "/dead/replay",
		"Ask":    fmt.Sprintf("Replay %d dead %s%s?", n, plural(n, "job", "jobs"), describeFilter(f)),
		"Button": fmt.Sprintf("Replay %d", n),
		"Fields": map[string]string{"queue": f.Queue, "kind": f.Kind, "error": f.ErrorContains},
		"None":   n == 0,
		"Writes": h.opts.AllowWrites,
		"CSRF":   h.csrf,
	})
}

// replayDead serves POST /dead/replay: replays the dead jobs of the filter.
func (h *handler) replayDead(w http.ResponseWriter, r *http.Request) {
	f := deadFilter(r.PostForm)
	n, err := h.q.ReplayDead(r.Context(), f)
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
	n, err := h.q.CountDead(r.Context(), d)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "confirm", map[string]any{
		"Title":  "Purge dead jobs",
		"Action": "/dead/purge",
		"Ask":    fmt.Sprintf("Delete %d %s dead for %s or more, with %s history? This cannot be undone.", n, plural(n, "job", "jobs"), litequeue.FormatDuration(d), plural(n, "its", "their")),
		"Button": fmt.Sprintf("Delete %d", n),
		"Fields": map[string]string{"older": r.URL.Query().Get("older")},
		"None":   n == 0,
		"Writes": h.opts.AllowWrites,
		"CSRF":   h.csrf,
	})
}

// purgeDead serves POST /dead/purge.
func (h *handler) purgeDead(w http.ResponseWriter, r *http.Request) {
	d, err := purgeAge(r.PostForm)
	if err != nil {
		h.problem(w, err)
		return
	}
	n, err := h.q.PurgeDead(r.Context(), d)
	if err != nil {
		h.fail(w, fmt.Errorf("purged %d, then: %w", n, err))
		return
	}
	h.render(w, http.StatusOK, "message", map[string]any{"Title": "Purged",
		"Message": fmt.Sprintf("Deleted %d dead %s, dead for %s or more.", n, plural(n, "job", "jobs"), litequeue.FormatDuration(d))})
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
