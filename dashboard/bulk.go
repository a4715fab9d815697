package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// A bulk action, "Replay every match" of the dead letters or "Purge
// older", is counted and confirmed on a page of its own (GET), then done
// by its form (POST). The form carries the tally that the person
// confirmed, and the action is done on those jobs only: when they are no
// longer as many, nothing is done, and the page asks again with the new
// count (409).

// bulkAction is a replay or a purge of many dead jobs, as the dashboard
// confirms and does it.
type bulkAction struct {
	title  string            // of the confirmation
	path   string            // where its form posts
	fields map[string]string // the form's fields that select the jobs
	tally  func(context.Context) (litequeue.Tally, error)
	act    func(context.Context, litequeue.Tally) (int, error)
	ask    func(n int) (question, button string)
	did    string                          // "replayed", "deleted"
	done   func(n int) (title, msg string) // what it did
}

// replayAction is the replay of the dead jobs of f.
func (h *handler) replayAction(f litequeue.Filter) bulkAction {
	return bulkAction{
		title:  "Replay dead jobs",
		path:   "/dead/replay",
		fields: map[string]string{"queue": f.Queue, "kind": f.Kind, "error": f.ErrorContains, "key": f.UniqueKey, "meta": metaField(f)},
		tally:  func(ctx context.Context) (litequeue.Tally, error) { return h.q.TallyReplay(ctx, f) },
		act: func(ctx context.Context, t litequeue.Tally) (int, error) {
			return h.q.ReplayTallied(ctx, f, t)
		},
		ask: func(n int) (string, string) {
			return fmt.Sprintf("Replay %d dead %s%s?", n, plural(n, "job", "jobs"), describeFilter(f)), fmt.Sprintf("Replay %d", n)
		},
		did: "replayed",
		done: func(n int) (string, string) {
			return "Replayed", fmt.Sprintf("Replayed %d dead %s%s: they are pending, due now.", n, plural(n, "job", "jobs"), describeFilter(f))
		},
	}
}

// purgeAction is the purge of the jobs dead for age or more.
func (h *handler) purgeAction(age time.Duration) bulkAction {
	older := litequeue.FormatDuration(age)
	return bulkAction{
		title:  "Purge dead jobs",
		path:   "/dead/purge",
		fields: map[string]string{"older": older},
		tally:  func(ctx context.Context) (litequeue.Tally, error) { return h.q.TallyPurge(ctx, age) },
		act: func(ctx context.Context, t litequeue.Tally) (int, error) {
			return h.q.PurgeTallied(ctx, age, t)
		},
		ask: func(n int) (string, string) {
			return fmt.Sprintf("Delete %d %s dead for %s or more, with %s history? This cannot be undone.",
				n, plural(n, "job", "jobs"), older, plural(n, "its", "their")), fmt.Sprintf("Delete %d", n)
		},
		did: "deleted",
		done: func(n int) (string, string) {
			return "Purged", fmt.Sprintf("Deleted %d dead %s, dead for %s or more.", n, plural(n, "job", "jobs"), older)
		},
	}
}

// deadFilter reads the filter of dead jobs that a replay-all form gives:
// every field of the jobs list's filter, so that a replay never takes more
// than the list showed.
func deadFilter(v url.Values) (litequeue.Filter, error) {
	lq := listQuery{State: string(litequeue.Dead), Queue: v.Get("queue"), Kind: v.Get("kind"), Error: v.Get("error"),
		Key: v.Get("key"), Meta: v.Get("meta")}
	if k, _, ok := strings.Cut(lq.Meta, "="); lq.Meta != "" && (!ok || k == "") {
		return litequeue.Filter{}, badRequest("meta=%q is not a metadata key=value", lq.Meta)
	}
	return lq.filter(), nil
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

// confirmReplay serves GET /dead/replay: how many dead jobs the filter
// matches, and a form to replay them.
func (h *handler) confirmReplay(w http.ResponseWriter, r *http.Request) {
	f, err := deadFilter(r.URL.Query())
	if err != nil {
		h.problem(w, err)
		return
	}
	h.confirm(w, r, h.replayAction(f), http.StatusOK, "")
}

// replayDead serves POST /dead/replay.
func (h *handler) replayDead(w http.ResponseWriter, r *http.Request) {
	f, err := deadFilter(r.PostForm)
	if err != nil {
		h.problem(w, err)
		return
	}
	h.bulk(w, r, h.replayAction(f))
}

// confirmPurge serves GET /dead/purge: how many dead jobs are older than
// the age, and a form to delete them.
func (h *handler) confirmPurge(w http.ResponseWriter, r *http.Request) {
	d, err := purgeAge(r.URL.Query())
	if err != nil {
		h.problem(w, err)
		return
	}
	h.confirm(w, r, h.purgeAction(d), http.StatusOK, "")
}

// purgeDead serves POST /dead/purge.
func (h *handler) purgeDead(w http.ResponseWriter, r *http.Request) {
	d, err := purgeAge(r.PostForm)
	if err != nil {
		h.problem(w, err)
		return
	}
	h.bulk(w, r, h.purgeAction(d))
}

// confirm counts the jobs of a and answers with status and a form to do a
// on them, which carries the tally. changed, if any, says why it asks
// again.
func (h *handler) confirm(w http.ResponseWriter, r *http.Request, a bulkAction, status int, changed string) {
	t, err := a.tally(r.Context())
	if err != nil {
		h.fail(w, err)
		return
	}
	a.fields["jobs"] = strconv.Itoa(t.Jobs)
	a.fields["max"] = strconv.FormatInt(t.MaxID, 10)
	question, button := a.ask(t.Jobs)
	h.ask(w, status, confirmPage{Title: a.title, Action: a.path, Changed: changed, Ask: question, Button: button,
		Fields: a.fields, None: t.Jobs == 0})
}

// confirmPage is the page that asks before an act that cannot be undone,
// or acts on many jobs (confirm.html): its form posts Fields and IDs to
// Action; Back leads away (default: the dead jobs).
type confirmPage struct {
	Title, Ask, Button, Action, Back, Changed string
	Fields                                    map[string]string
	IDs                                       []string
	None                                      bool // nothing to do
	Writes                                    bool
	CSRF                                      string
	Refresh                                   bool // the layout's auto-refresh: never, on a question
}

// ask answers with status and the page p.
func (h *handler) ask(w http.ResponseWriter, status int, p confirmPage) {
	p.Writes, p.CSRF = h.opts.AllowWrites, h.csrf
	h.render(w, status, "confirm", p)
}

// bulk does a on the jobs the form's tally counted, or, when they are no
// longer as many, nothing: then it asks again.
func (h *handler) bulk(w http.ResponseWriter, r *http.Request, a bulkAction) {
	t, err := formTally(r.PostForm)
	if err != nil {
		h.problem(w, err)
		return
	}
	n, err := a.act(r.Context(), t)
	if te, ok := errors.AsType[*litequeue.TallyError](err); ok {
		h.confirm(w, r, a, http.StatusConflict, fmt.Sprintf("The dead jobs changed after they were counted: %d match now, "+
			"not the %d counted. Nothing was %s; here is the new count.", te.Got, te.Want, a.did))
		return
	}
	if err != nil {
		h.fail(w, fmt.Errorf("%s %d, then: %w", a.did, n, err))
		return
	}
	title, msg := a.done(n)
	h.render(w, http.StatusOK, "message", map[string]any{"Title": title, "Message": msg})
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
	if f.UniqueKey != "" {
		s += fmt.Sprintf(" with unique key %q", f.UniqueKey)
	}
	if m := metaField(f); m != "" {
		s += fmt.Sprintf(" with metadata %q", m)
	}
	return s
}

// metaField is the metadata key=value of a filter made from the jobs
// list's query (at most one pair), "" for none.
func metaField(f litequeue.Filter) string {
	for k, v := range f.Metadata {
		return k + "=" + v
	}
	return ""
}
