package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
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
		h.refused(w, r, err)
		return
	}
	http.Redirect(w, r, h.opts.Prefix+"/jobs/"+strconv.FormatInt(id, 10), http.StatusSeeOther)
}

// plural returns one or many for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
