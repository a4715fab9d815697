package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/litequeue/litequeue"
)

// Flow control on the page: what is paused and since when, the breakers
// that are not closed, the limits of the kinds this process handles, the
// periodic schedules, and (with writes allowed) the forms that pause,
// resume and reset them, and act on a job or on the jobs selected in the
// list.

// routeFlow adds the flow control's pages and forms to h's mux.
func (h *handler) routeFlow() {
	h.mux.HandleFunc("GET /periodic", h.periodic)
	h.mux.HandleFunc("GET /healthz", h.healthz)
	h.mux.HandleFunc("POST /pause", h.write(h.pauseForm(true)))
	h.mux.HandleFunc("POST /resume", h.write(h.pauseForm(false)))
	h.mux.HandleFunc("POST /breakers/reset", h.write(h.resetBreaker))
	h.mux.HandleFunc("POST /jobs/{id}/run-now", h.write(h.runNow))
	h.mux.HandleFunc("POST /jobs/{id}/delete", h.write(h.deleteJob))
	h.mux.HandleFunc("POST /jobs/selected", h.write(h.selected))
}

// breakerView is one breaker on the overview.
type breakerView struct {
	Kind string
	litequeue.BreakerStats
}

// pausedKind is a paused kind on the overview, with its pending jobs.
type pausedKind struct {
	litequeue.Pause
	Pending int
}

// flowData adds to the overview's data what the flow control says, from
// stats and this process: the pauses (a queue's on its row), the breakers
// (those open or half-open, and the closed ones of this process's
// handlers), the limits, and the unhandled kinds only when this
// process has handlers (a process without, as `litequeue serve`, handles
// none, and its list would name every kind).
func (h *handler) flowData(ctx context.Context, stats litequeue.Stats, data map[string]any) error {
	pausedQueues := map[string]*litequeue.Pause{}
	var queues []litequeue.Pause
	var kinds []pausedKind
	for i, p := range stats.Paused {
		if p.Queue != "" {
			pausedQueues[p.Queue] = &stats.Paused[i]
			queues = append(queues, p)
			continue
		}
		n, err := h.q.Count(ctx, litequeue.Filter{State: litequeue.Pending, Kind: p.Kind})
		if err != nil {
			return err
		}
		kinds = append(kinds, pausedKind{p, n})
	}
	all, err := h.q.Breakers(ctx)
	if err != nil {
		return err
	}
	var breakers []breakerView
	for kind, b := range all {
		breakers = append(breakers, breakerView{kind, b})
	}
	slices.SortFunc(breakers, func(a, b breakerView) int { return cmp.Compare(a.Kind, b.Kind) })
	limits, err := h.q.Limits(ctx)
	if err != nil {
		return err
	}
	handles := len(h.q.Handled()) > 0
	if !handles {
		data["Unhandled"] = nil
	}
	data["Handles"] = handles
	data["PausedQueues"], data["QueuePauses"], data["KindPauses"] = pausedQueues, queues, kinds
	data["Breakers"], data["Limits"] = breakers, limits
	data["Writes"], data["CSRF"] = h.opts.AllowWrites, h.csrf
	return nil
}

// pauseButton is the form of one pause or resume button.
type pauseButton struct{ Op, Scope, Name, CSRF string }

// flowForm makes a pause or resume button's form for a template: op is
// "pause" or "resume", scope "queue" or "kind".
func flowForm(op, scope, name, csrf string) pauseButton { return pauseButton{op, scope, name, csrf} }

// periodic serves GET /periodic: every schedule stored in the database.
func (h *handler) periodic(w http.ResponseWriter, r *http.Request) {
	infos, err := h.q.Periodics(r.Context())
	if err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "periodic", map[string]any{
		"Title":     "Periodic schedules",
		"Refresh":   true,
		"Schedules": infos,
		"Now":       h.opts.Clock.Now(),
		"Grace":     litequeue.PeriodicGrace,
	})
}

// healthz serves GET /healthz: 200 "ok" when the database answers, 503
// when it does not. It needs no token (a load balancer's probe carries
// none) but passes the Host check like every request; it says nothing
// else.
func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if _, err := h.q.Paused(r.Context()); err != nil {
		h.opts.Logger.Warn("litequeue dashboard: health check failed", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("unavailable\n"))
		return
	}
	w.Write([]byte("ok\n"))
}

// isHealthz reports whether r asks for the health check, which needs no
// token.
func isHealthz(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/healthz"
}

// pauseForm serves POST /pause (pause true) and POST /resume: the form's
// scope, queue or kind, and name. It sends the browser back to the
// overview.
func (h *handler) pauseForm(pause bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PostForm.Get("name")
		var act func(context.Context, string) error
		switch scope := r.PostForm.Get("scope"); {
		case scope == "queue" && pause:
			act = h.q.PauseQueue
		case scope == "queue":
			act = h.q.ResumeQueue
		case scope == "kind" && pause:
			act = h.q.PauseKind
		case scope == "kind":
			act = h.q.ResumeKind
		default:
			h.problem(w, badRequest("scope=%q is neither queue nor kind", scope))
			return
		}
		h.overviewAction(w, r, func(ctx context.Context) error { return act(ctx, name) })
	}
}

// resetBreaker serves POST /breakers/reset: the form's kind's breaker is
// closed.
func (h *handler) resetBreaker(w http.ResponseWriter, r *http.Request) {
	kind := r.PostForm.Get("kind")
	h.overviewAction(w, r, func(ctx context.Context) error { return h.q.ResetBreaker(ctx, kind) })
}

// overviewAction runs act and sends the browser to the overview; a
// refusal (an empty or overlong name) is shown with the library's message.
func (h *handler) overviewAction(w http.ResponseWriter, r *http.Request, act func(context.Context) error) {
	if err := act(r.Context()); err != nil {
		if errors.Is(err, litequeue.ErrClosed) || errors.Is(err, context.Canceled) {
			h.fail(w, err)
			return
		}
		h.opts.Logger.Info("litequeue dashboard: refused", "path", r.URL.Path, "err", err)
		h.problem(w, badRequest("%s", err.Error()))
		return
	}
	http.Redirect(w, r, h.opts.Prefix+"/", http.StatusSeeOther)
}

// runNow serves POST /jobs/{id}/run-now, then shows the job.
func (h *handler) runNow(w http.ResponseWriter, r *http.Request) {
	h.jobAction(w, r, h.q.RunNow)
}

// deleteJob serves POST /jobs/{id}/delete: without confirmed=yes it asks
// first (a delete cannot be undone), with it it deletes, then shows what
// it did: the job's page is gone.
func (h *handler) deleteJob(w http.ResponseWriter, r *http.Request) {
	id, err := jobID(r)
	if err != nil {
		h.problem(w, err)
		return
	}
	if r.PostForm.Get("confirmed") != "yes" {
		h.confirmDeleteJob(w, r, id)
		return
	}
	if err := h.q.Delete(r.Context(), id); err != nil {
		h.refused(w, r, err)
		return
	}
	h.render(w, http.StatusOK, "message", map[string]any{"Title": "Deleted",
		"Message": "Deleted job " + strconv.FormatInt(id, 10) + " and its history."})
}

// confirmDeleteJob asks before the delete of job id, as the delete of
// selected jobs does (see confirmDelete), naming its kind and state.
func (h *handler) confirmDeleteJob(w http.ResponseWriter, r *http.Request, id int64) {
	j, ok := h.getJob(w, r, id)
	if !ok {
		return
	}
	name := strconv.FormatInt(id, 10)
	h.ask(w, http.StatusOK, confirmPage{
		Title:  "Delete job " + name,
		Ask:    fmt.Sprintf("Delete job %d (%s, %s) and its history for good? This cannot be undone.", id, j.Kind, j.State),
		Button: "Delete job " + name,
		Action: "/jobs/" + name + "/delete",
		Fields: map[string]string{"confirmed": "yes"},
		Back:   "/jobs/" + name,
	})
}

// refused answers a job action the library refused: 404 for no such job,
// 409 for one in a state the action does not take.
func (h *handler) refused(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusConflict
	if errors.Is(err, litequeue.ErrNotFound) {
		status = http.StatusNotFound
	}
	h.opts.Logger.Info("litequeue dashboard: refused", "path", r.URL.Path, "err", err)
	h.problem(w, &problemError{status, err.Error()})
}

// searchID answers GET /jobs?id=N, the search by job ID, with the job's
// page, and reports whether it did.
func (h *handler) searchID(w http.ResponseWriter, r *http.Request) bool {
	s := strings.TrimSpace(r.URL.Query().Get("id"))
	if s == "" {
		return false
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		h.problem(w, badRequest("id=%q is not a job ID (a whole number, 1 or more)", s))
		return true
	}
	http.Redirect(w, r, h.opts.Prefix+"/jobs/"+strconv.FormatInt(id, 10), http.StatusSeeOther)
	return true
}
