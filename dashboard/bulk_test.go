package dashboard_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// formOf reads the hidden fields of a confirmation page's form, as the
// browser posts them.
func formOf(tb testing.TB, page string) url.Values {
	tb.Helper()
	form := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	if form.Get("csrf") == "" {
		tb.Fatalf("no form to post in the page:\n%s", page)
	}
	return form
}

// dying is a queue on a mock clock whose "doomed" jobs die at their first
// run, and a dashboard of it that allows writes.
type dying struct {
	q   *litequeue.Queue
	clk *clock.Mock
	srv *httptest.Server
}

func newDying(t *testing.T) *dying {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "dying.db"), litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	q.Handle("doomed", func(context.Context, *litequeue.Job) error { return litequeue.Permanent(errors.New("no")) })
	srv := httptest.NewServer(dashboard.New(q, dashboard.Options{AllowWrites: true, Clock: clk}))
	t.Cleanup(srv.Close)
	return &dying{q, clk, srv}
}

// enqueue adds a doomed job, due after delay.
func (d *dying) enqueue(t *testing.T, delay time.Duration) *litequeue.Job {
	t.Helper()
	j, err := d.q.Enqueue(t.Context(), "doomed", nil, litequeue.Delay(delay))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// run runs the jobs due: the doomed ones die.
func (d *dying) run(t *testing.T) {
	t.Helper()
	if _, err := d.q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// dead counts the dead jobs.
func (d *dying) dead(t *testing.T) int {
	t.Helper()
	n, err := d.q.Count(t.Context(), litequeue.Filter{State: litequeue.Dead})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDead_ReplayAsksAgainWhenJobsDie: the confirmation counts 2 dead
// jobs; before the click, a job counted among the pending dies, and
// another with a higher ID. The replay does nothing and asks again with
// the new count, 4; a job that dies after that count, above it, is not
// replayed with the 4 confirmed.
func TestDead_ReplayAsksAgainWhenJobsDie(t *testing.T) {
	t.Parallel()
	d := newDying(t)
	d.enqueue(t, time.Hour)
	d.enqueue(t, 0)
	d.enqueue(t, 0)
	d.run(t)
	_, page := get(t, d.srv.URL+"/dead/replay?kind=doomed")
	contains(t, "the confirmation", page, `Replay 2 dead jobs of kind &#34;doomed&#34;?`)

	d.clk.Add(time.Hour)
	d.enqueue(t, 0)
	d.run(t) // the job due in an hour dies, and the new one
	code, again := post(t, d.srv.URL+"/dead/replay", formOf(t, page))
	if code != http.StatusConflict {
		t.Fatalf("POST the replay of 2 once 4 are dead: %d, want 409 and the question again:\n%s", code, again)
	}
	contains(t, "the question again", again, "3 match now, not the 2 counted", "Nothing was replayed",
		`Replay 4 dead jobs of kind &#34;doomed&#34;?`, "Replay 4")
	if n := d.dead(t); n != 4 {
		t.Fatalf("%d dead jobs after the refused replay, want the 4", n)
	}

	last := d.enqueue(t, 0)
	d.run(t) // dies after the second count
	code, body := post(t, d.srv.URL+"/dead/replay", formOf(t, again))
	if code != http.StatusOK || !strings.Contains(body, "Replayed 4 dead jobs") {
		t.Fatalf("POST the replay of the 4 confirmed: %d:\n%s", code, body)
	}
	if got := stateOf(t, d.q, last.ID); got != litequeue.Dead {
		t.Errorf("the job that died after the count is %s, want dead", got)
	}
	if n := d.dead(t); n != 1 {
		t.Errorf("%d dead jobs after the replay, want the 1 not confirmed", n)
	}
}

// TestDead_PurgeAsksAgainWhenJobsAge: the confirmation counts 1 job dead
// for an hour; before the click, another counted job reaches that age.
// The purge deletes nothing and asks again for 2.
func TestDead_PurgeAsksAgainWhenJobsAge(t *testing.T) {
	t.Parallel()
	d := newDying(t)
	d.enqueue(t, 30*time.Minute) // dies at 30m
	d.enqueue(t, 0)              // dies at once
	d.run(t)
	d.clk.Add(30 * time.Minute)
	d.run(t)
	d.clk.Add(30 * time.Minute)
	_, page := get(t, d.srv.URL+"/dead/purge?older=1h")
	contains(t, "the confirmation", page, "Delete 1 job dead for 1h or more, with its history?")

	d.clk.Add(30 * time.Minute)
	code, again := post(t, d.srv.URL+"/dead/purge", formOf(t, page))
	if code != http.StatusConflict {
		t.Fatalf("POST the purge of 1 once 2 are old enough: %d, want 409 and the question again:\n%s", code, again)
	}
	contains(t, "the question again", again, "2 match now, not the 1 counted", "Nothing was deleted",
		"Delete 2 jobs dead for 1h or more, with their history?")
	if n := d.dead(t); n != 2 {
		t.Fatalf("%d dead jobs after the refused purge, want 2", n)
	}
	code, body := post(t, d.srv.URL+"/dead/purge", formOf(t, again))
	if code != http.StatusOK || !strings.Contains(body, "Deleted 2 dead jobs") {
		t.Fatalf("POST the purge of the 2 confirmed: %d:\n%s", code, body)
	}
	if n := d.dead(t); n != 0 {
		t.Errorf("%d dead jobs after the purge, want 0", n)
	}
}

// TestDead_FormsCarryTheirCount: a post of a bulk action without the
// count it confirmed, or with one that is no count, is refused, naming
// the field; nothing changes.
func TestDead_FormsCarryTheirCount(t *testing.T) {
	t.Parallel()
	d := newDying(t)
	d.enqueue(t, 0)
	d.run(t)
	for _, action := range []string{"replay", "purge"} {
		_, page := get(t, d.srv.URL+"/dead/"+action+"?older=0s")
		for field, value := range map[string]string{"jobs": "", "max": "", "jobs ": "x", "max ": "-1"} {
			form := formOf(t, page)
			field = strings.TrimSpace(field)
			if value == "" {
				form.Del(field)
			} else {
				form.Set(field, value)
			}
			code, body := post(t, d.srv.URL+"/dead/"+action, form)
			if code != http.StatusBadRequest || !strings.Contains(body, field+"=") {
				t.Errorf("POST the %s with %s=%q: %d, want 400 naming the field:\n%s", action, field, value, code, body)
			}
		}
	}
	if n := d.dead(t); n != 1 {
		t.Errorf("%d dead jobs after refused posts, want 1", n)
	}
}

// TestDead_ReplayKeepsTheListsFilter: the dead jobs listed by metadata
// and by unique key are what "Replay every match" counts and replays, not
// every dead job of their kind.
func TestDead_ReplayKeepsTheListsFilter(t *testing.T) {
	t.Parallel()
	d := newDying(t)
	ctx := t.Context()
	acme, err := d.q.Enqueue(ctx, "doomed", nil, litequeue.Metadata("tenant", "acme"))
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := d.q.Enqueue(ctx, "doomed", nil, litequeue.UniqueKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	other := d.enqueue(t, 0)
	d.run(t)
	for _, tc := range []struct {
		query string
		want  *litequeue.Job
	}{
		{"meta=tenant%3Dacme", acme},
		{"key=k1", keyed},
	} {
		_, list := get(t, d.srv.URL+"/jobs?state=dead&kind=doomed&"+tc.query)
		m := regexp.MustCompile(`(?s)<form method="get" action="/dead/replay">(.*?)<button`).FindStringSubmatch(list)
		if m == nil {
			t.Fatalf("no replay form in the list of %s:\n%s", tc.query, list)
		}
		confirm := url.Values{}
		for _, f := range hiddenRE.FindAllStringSubmatch(m[1], -1) {
			confirm.Set(html.UnescapeString(f[1]), html.UnescapeString(f[2]))
		}
		_, page := get(t, d.srv.URL+"/dead/replay?"+confirm.Encode())
		if !strings.Contains(page, "Replay 1 dead job") {
			t.Errorf("confirmation for %s does not count the one job listed:\n%s", tc.query, page)
		}
		if code, body := post(t, d.srv.URL+"/dead/replay", formOf(t, page)); code != http.StatusOK && code != http.StatusSeeOther {
			t.Fatalf("replay of %s: %d\n%s", tc.query, code, body)
		}
		if s := stateOf(t, d.q, tc.want.ID); s != litequeue.Pending {
			t.Errorf("the job listed by %s is %s, want pending", tc.query, s)
		}
	}
	if s := stateOf(t, d.q, other.ID); s != litequeue.Dead {
		t.Errorf("the job no filter listed is %s, want still dead", s)
	}
}
