package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// flat is body with every run of white space made one space.
func flat(body string) string { return regexp.MustCompile(`\s+`).ReplaceAllString(body, " ") }

// TestFlow_Overview: the overview marks the paused queue on its row with
// since when, lists the paused kind with its pending jobs, the open
// breaker with the failures that opened it, its trips and cool-down, and the limited kind's running
// run against its limits; the "no handler" line names email.send, which
// this process has no handler for.
func TestFlow_Overview(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		srv := f.server(t, dashboard.Options{})
		code, body := get(t, srv.URL+"/")
		if code != http.StatusOK {
			t.Fatalf("GET /: %d\n%s", code, body)
		}
		contains(t, "the overview", flat(body),
			`<a href="/jobs?queue=emails">emails</a> <span class="paused" title="claims stopped">paused since 2026-03-01 09:00:00Z (3m ago)</span>`,
			`<td>kind</td><td><a href="/jobs?state=pending&amp;kind=report.build">report.build</a></td><td class="n">2</td><td>2026-03-01 09:00:00Z (3m ago)</td>`,
			`<td>sync.push</td><td class="breaker open">open</td><td class="n failures">2 of 2 in 1m</td><td class="n">1</td><td>2026-03-01 09:00:00Z (3m ago)</td><td>2026-03-01 09:05:00Z (in 2m)</td>`,
			`<td>thumb.make</td><td class="n">1 of 3</td><td class="n">1 of 10 per 1m</td>`,
			`Due jobs of kinds no handler of this process runs: <code>email.send</code>`)
		if strings.Contains(body, "<form") {
			t.Error("the read-only overview has a form")
		}
	})
}

// TestFlow_OverviewWithoutHandlers: a process with no handlers, as
// `litequeue serve`, shows the pauses and breakers the database holds
// (a breaker's failures against the threshold its worker recorded) but
// no "no handler" line, and says that it knows no limits.
func TestFlow_OverviewWithoutHandlers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		other := f.open(litequeue.Options{Clock: f.clk})
		srv := mount(t, other, dashboard.Options{Clock: f.clk})
		_, body := get(t, srv+"/")
		contains(t, "the overview", flat(body), "paused since", `<td class="breaker open">open</td><td class="n failures">2 of 2 in 1m</td>`,
			"this process handles no kind: the limits are the workers'")
		if strings.Contains(body, "no handler") {
			t.Error("the overview of a process without handlers shows the \"no handler\" line")
		}
	})
}

// TestFlow_PauseResumeReset posts the overview's forms: resume the queue,
// pause it again, resume the kind, pause a kind by name, reset the
// breaker; each answers 303 to the overview and changes the database.
// Bad forms are refused with the value and change nothing.
func TestFlow_PauseResumeReset(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		srv := f.server(t, dashboard.Options{AllowWrites: true})
		_, page := get(t, srv.URL+"/")
		token := csrf(t, page)
		ctx := context.Background()
		paused := func() []string {
			ps, err := f.q.Paused(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range ps {
				names = append(names, p.Queue+"/"+p.Kind)
			}
			return names
		}
		for _, step := range []struct {
			path, scope, name string
			want              string
		}{
			{"/resume", "queue", "emails", "[/report.build]"},
			{"/pause", "queue", "emails", "[emails/ /report.build]"},
			{"/resume", "kind", "report.build", "[emails/]"},
			{"/pause", "kind", "sync.push", "[emails/ /sync.push]"},
		} {
			code, body := post(t, srv.URL+step.path, url.Values{"csrf": {token}, "scope": {step.scope}, "name": {step.name}})
			if code != http.StatusSeeOther {
				t.Fatalf("POST %s %s %s: %d\n%s", step.path, step.scope, step.name, code, body)
			}
			if got := "[" + strings.Join(paused(), " ") + "]"; got != step.want {
				t.Errorf("after %s %s %s: paused %s, want %s", step.path, step.scope, step.name, got, step.want)
			}
		}
		code, body := post(t, srv.URL+"/breakers/reset", url.Values{"csrf": {token}, "kind": {"sync.push"}})
		if code != http.StatusSeeOther {
			t.Fatalf("POST /breakers/reset: %d\n%s", code, body)
		}
		st, err := f.q.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Breakers) != 0 {
			t.Errorf("breakers after the reset: %v, want none open", st.Breakers)
		}
		_, page = get(t, srv.URL+"/")
		contains(t, "the overview after the reset", flat(page), `<td>sync.push</td><td class="breaker closed">closed</td><td class="n failures">0 of 2 in 1m</td><td class="n">0</td><td>–</td><td>–</td> <td></td>`)
		for _, bad := range []struct {
			path string
			form url.Values
			want string
		}{
			{"/pause", url.Values{"scope": {"topic"}, "name": {"x"}}, `scope=&#34;topic&#34; is neither queue nor kind`},
			{"/pause", url.Values{"scope": {"queue"}, "name": {""}}, "the queue&#39;s name is empty"},
			{"/pause", url.Values{"scope": {"kind"}, "name": {strings.Repeat("k", 300)}}, "255"},
			{"/breakers/reset", url.Values{"kind": {""}}, "the kind&#39;s name is empty"},
		} {
			bad.form.Set("csrf", token)
			code, body := post(t, srv.URL+bad.path, bad.form)
			if code != http.StatusBadRequest || !strings.Contains(body, bad.want) {
				t.Errorf("POST %s %v: %d, want 400 saying %q\n%s", bad.path, bad.form, code, bad.want, body)
			}
		}
		if got := strings.Join(paused(), " "); got != "emails/ /sync.push" {
			t.Errorf("after the refused forms: paused %s, want emails/ /sync.push as before", got)
		}
	})
}

// TestFlow_ReadOnlyRefusesWrites: without AllowWrites, the flow's forms
// are refused with 403 and change nothing.
func TestFlow_ReadOnlyRefusesWrites(t *testing.T) {
	f := newFlow(t, backends[0])
	srv := f.server(t, dashboard.Options{})
	for _, path := range []string{"/resume", "/breakers/reset", "/jobs/selected", "/jobs/" + itoa(f.thumb.ID) + "/delete"} {
		code, _ := post(t, srv.URL+path, url.Values{"scope": {"queue"}, "name": {"emails"}, "kind": {"sync.push"}})
		if code != http.StatusForbidden {
			t.Errorf("POST %s read-only: %d, want 403", path, code)
		}
	}
	ps, err := f.q.Paused(context.Background())
	if err != nil || len(ps) != 2 {
		t.Errorf("paused after the refused writes: %v, %v; want the 2 pauses", ps, err)
	}
}

// TestFlow_RunningJobPage: the page of a running job shows its run's
// worker, start, lease deadline and timeout, not "Not run yet."
func TestFlow_RunningJobPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		srv := f.server(t, dashboard.Options{})
		run, running, err := f.q.CurrentRun(context.Background(), f.thumb.ID)
		if err != nil || !running {
			t.Fatalf("CurrentRun: %v, %v, %v", run, running, err)
		}
		if run.Worker == "" || !run.LeaseUntil.After(run.StartedAt) || run.Timeout != thumbTimeout {
			t.Errorf("CurrentRun = %+v: want a worker, a lease past the start, timeout %v", run, thumbTimeout)
		}
		_, body := get(t, srv.URL+"/jobs/"+itoa(f.thumb.ID))
		contains(t, "the running job's page", flat(body),
			`<dd id="run-worker">`+run.Worker+`</dd>`,
			`<dd id="run-started">2026-03-01 09:03:00Z (now)</dd>`,
			`<dd id="run-lease">`+run.LeaseUntil.UTC().Format("2006-01-02 15:04:05Z"),
			`<dd id="run-timeout">2m</dd>`,
			"No run finished yet: the first is running.")
		if strings.Contains(body, "Not run yet.") {
			t.Error(`the running job's page says "Not run yet."`)
		}
	})
}

// TestFlow_JobActions: run-now makes a scheduled job due, delete asks
// first and then deletes a finished job and refuses a pending one, each
// from its job page's form.
func TestFlow_JobActions(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		srv := f.server(t, dashboard.Options{AllowWrites: true})
		ctx := context.Background()
		later, err := f.q.Enqueue(ctx, "report.build", nil, litequeue.Delay(time.Hour), litequeue.OnQueue("later"))
		if err != nil {
			t.Fatal(err)
		}
		_, page := get(t, srv.URL+"/jobs/"+itoa(later.ID))
		contains(t, "the scheduled job's page", page, `<button id="run-now">Run now</button>`, "(in 1h)")
		token := csrf(t, page)
		if code, body := post(t, srv.URL+"/jobs/"+itoa(later.ID)+"/delete", url.Values{"csrf": {token}, "confirmed": {"yes"}}); code != http.StatusConflict {
			t.Errorf("delete of a pending job: %d, want 409\n%s", code, body)
		}
		if code, body := post(t, srv.URL+"/jobs/"+itoa(later.ID)+"/run-now", url.Values{"csrf": {token}}); code != http.StatusSeeOther {
			t.Fatalf("run-now: %d\n%s", code, body)
		}
		j, err := f.q.Get(ctx, later.ID)
		if err != nil || j.RunAt.After(f.clk.Now()) {
			t.Errorf("after run-now: %v, %v; want due now", j, err)
		}
		dead, err := f.q.List(ctx, litequeue.Filter{State: litequeue.Dead, Kind: "sync.push"})
		if err != nil || len(dead) != 2 {
			t.Fatalf("dead sync.push: %v, %v", dead, err)
		}
		// Asked first: the form of the confirmation posts confirmed=yes.
		code, body := post(t, srv.URL+"/jobs/"+itoa(dead[0].ID)+"/delete", url.Values{"csrf": {token}})
		if code != http.StatusOK {
			t.Fatalf("delete of a dead job, unconfirmed: %d\n%s", code, body)
		}
		contains(t, "the confirmation", body, "Delete job "+itoa(dead[0].ID)+" (sync.push, dead) and its history for good?",
			`action="/jobs/`+itoa(dead[0].ID)+`/delete"`, `name="confirmed" value="yes"`)
		if _, err := f.q.Get(ctx, dead[0].ID); err != nil {
			t.Fatalf("the job is gone before the delete was confirmed: %v", err)
		}
		if code, body := post(t, srv.URL+"/jobs/999999/delete", url.Values{"csrf": {token}}); code != http.StatusNotFound {
			t.Errorf("delete of no job: %d, want 404\n%s", code, body)
		}
		code, body = post(t, srv.URL+"/jobs/"+itoa(dead[0].ID)+"/delete", url.Values{"csrf": {token}, "confirmed": {"yes"}})
		if code != http.StatusOK || !strings.Contains(body, "Deleted job "+itoa(dead[0].ID)) {
			t.Errorf("delete of a dead job: %d\n%s", code, body)
		}
		if _, err := f.q.Get(ctx, dead[0].ID); err == nil {
			t.Error("the deleted job is still there")
		}
	})
}

// TestFlow_Selected acts on the rows selected in the jobs list: the jobs
// the library takes are acted on, the others named with why; more than a
// page, none, or an unknown action is refused with the value and changes
// nothing.
func TestFlow_Selected(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		srv := f.server(t, dashboard.Options{AllowWrites: true})
		ctx := context.Background()
		_, page := get(t, srv.URL+"/jobs?kind=report.build")
		contains(t, "the jobs list", page, `id="select-all"`, `form="selected" class="select"`, `<button id="act">`)
		token := csrf(t, page)
		reports, err := f.q.List(ctx, litequeue.Filter{Kind: "report.build"})
		if err != nil || len(reports) != 2 {
			t.Fatalf("reports: %v, %v", reports, err)
		}
		dead, err := f.q.List(ctx, litequeue.Filter{State: litequeue.Dead})
		if err != nil || len(dead) != 2 {
			t.Fatalf("dead: %v, %v", dead, err)
		}
		ids := []string{itoa(reports[0].ID), itoa(reports[1].ID), itoa(dead[0].ID)}
		code, body := post(t, srv.URL+"/jobs/selected", url.Values{"csrf": {token}, "action": {"cancel"}, "id": ids})
		if code != http.StatusOK {
			t.Fatalf("cancel selected: %d\n%s", code, body)
		}
		contains(t, "the answer", body, "Cancelled: 2 of 3 selected jobs.", "Refused: ", itoa(dead[0].ID))
		for _, id := range []int64{reports[0].ID, reports[1].ID} {
			if got := stateOf(t, f.q, id); got != litequeue.Cancelled {
				t.Errorf("job %d is %s after the cancel, want cancelled", id, got)
			}
		}
		if got := stateOf(t, f.q, dead[0].ID); got != litequeue.Dead {
			t.Errorf("the dead job is %s after the refused cancel, want dead", got)
		}
		many := make([]string, 51)
		for i := range many {
			many[i] = itoa(dead[1].ID)
		}
		for _, bad := range []struct {
			form url.Values
			want string
		}{
			{url.Values{"action": {"delete"}, "id": many}, "51 jobs selected: at most 50"},
			{url.Values{"action": {"delete"}}, "no job selected"},
			{url.Values{"action": {"explode"}, "id": {itoa(dead[1].ID)}}, `action=&#34;explode&#34; is none of`},
			{url.Values{"action": {"delete"}, "id": {"x1"}}, `id=&#34;x1&#34; is not a job ID`},
		} {
			bad.form.Set("csrf", token)
			code, body := post(t, srv.URL+"/jobs/selected", bad.form)
			if code != http.StatusBadRequest || !strings.Contains(body, bad.want) {
				t.Errorf("POST /jobs/selected %v: %d, want 400 saying %q\n%s", bad.form, code, bad.want, body)
			}
		}
		if got := stateOf(t, f.q, dead[1].ID); got != litequeue.Dead {
			t.Errorf("job %d is %s after the refused forms, want dead", dead[1].ID, got)
		}
	})
}

// TestPeriodicPage: /periodic lists the schedule with its spec, zone,
// missed-slot policy, last slot and next; once the slot has fired, its
// job and how late it was enqueued.
func TestPeriodicPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := newMock()
		q := b.open(t)(litequeue.Options{Clock: clk})
		q.Handle("report.build", func(context.Context, *litequeue.Job) error { return nil })
		ctx := context.Background()
		berlin, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			t.Skip("no time zone data:", err)
		}
		if err := q.Periodic(ctx, "nightly", "0 3 * * *", "report.build", nil); err != nil {
			t.Fatal(err)
		}
		if err := q.Periodic(ctx, "berlin", "30 9 * * *", "report.build", nil, litequeue.PeriodicIn(berlin), litequeue.OnMissed(litequeue.SkipMissed)); err != nil {
			t.Fatal(err)
		}
		srv := mount(t, q, dashboard.Options{Clock: clk})
		_, body := get(t, srv+"/periodic")
		contains(t, "the schedules", flat(body),
			`<td>nightly</td><td><code>0 3 * * *</code></td><td>UTC</td><td>report.build</td><td>default</td> <td>one caught up</td> <td>2026-03-01 03:00:00Z (6h ago)</td> <td>–</td> <td class="n">–</td> <td>2026-03-02 03:00:00Z (in 18h)</td>`,
			`<td>berlin</td><td><code>30 9 * * *</code></td><td>Europe/Berlin</td><td>report.build</td><td>default</td> <td>skipped</td> <td>2026-03-01 08:30:00Z (30m ago)</td>`,
			`<td>2026-03-02 08:30:00Z (in 23h30m)</td>`)
		clk.Add(18*time.Hour + 2*time.Second) // past the nightly slot
		if _, err := q.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		infos, err := q.Periodics(ctx)
		if err != nil || len(infos) != 2 || infos[1].LastJobID == 0 {
			t.Fatalf("Periodics after the slot: %+v, %v", infos, err)
		}
		_, body = get(t, srv+"/periodic")
		contains(t, "the schedules after the slot", flat(body),
			`<td>2026-03-02 03:00:00Z (2s ago)</td> <td><a href="/jobs/`+itoa(infos[1].LastJobID)+`">`+itoa(infos[1].LastJobID)+`</a></td> <td class="n">2s</td> <td>2026-03-03 03:00:00Z (in 1d)</td>`)
	})
}

// TestHealthz: /healthz answers 200 "ok" while the database answers, also
// without the token, and 503 once the Queue is closed; it keeps the Host
// check.
func TestHealthz(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		q := b.open(t)(litequeue.Options{})
		srv := mount(t, q, dashboard.Options{})
		if code, body := get(t, srv+"/healthz"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET /healthz: %d %q, want 200 ok", code, body)
		}
		tokened := mount(t, q, dashboard.Options{Token: "s3cret"})
		if code, body := get(t, tokened+"/healthz"); code != http.StatusOK || body != "ok\n" {
			t.Errorf("GET /healthz without the token: %d %q, want 200 ok", code, body)
		}
		if code, _ := get(t, tokened+"/"); code != http.StatusUnauthorized {
			t.Errorf("GET / without the token: %d, want 401", code)
		}
		if code, _ := do(t, http.MethodGet, srv+"/healthz", nil, http.Header{"Host": {"rebind.test"}}); code != http.StatusMisdirectedRequest {
			t.Errorf("GET /healthz for another host: %d, want 421", code)
		}
		q.Close()
		if code, body := get(t, srv+"/healthz"); code != http.StatusServiceUnavailable || body != "unavailable\n" {
			t.Errorf("GET /healthz after Close: %d %q, want 503 unavailable", code, body)
		}
	})
}

// TestJobs_SearchByID: the jobs list's search by ID sends the browser to
// the job's page, and refuses what is not an ID.
func TestJobs_SearchByID(t *testing.T) {
	q := newQueue(t)
	srv := mount(t, q, dashboard.Options{})
	code, _ := get(t, srv+"/jobs?id=+%2342+")
	if code != http.StatusSeeOther {
		t.Errorf("GET /jobs?id=#42: %d, want 303", code)
	}
	resp, err := noRedirects.Get(srv + "/jobs?id=42")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); loc != "/jobs/42" {
		t.Errorf("GET /jobs?id=42 sends to %q, want /jobs/42", loc)
	}
	if code, body := get(t, srv+"/jobs?id=abc"); code != http.StatusBadRequest || !strings.Contains(body, `id=&#34;abc&#34; is not a job ID`) {
		t.Errorf("GET /jobs?id=abc: %d, want 400 naming the value\n%s", code, body)
	}
}

// TestTimesInUTC: a time shows in UTC with a Z and how long ago, whatever
// the zone of the clock; an age is rounded as the command rounds it.
func TestTimesInUTC(t *testing.T) {
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	_, body := get(t, srv.URL+"/jobs/"+itoa(d.later.ID))
	contains(t, "the job page", body, "2026-03-01 11:00:00Z (in 1h)", "2026-03-01 10:00:00Z (now)")
	d.clk.Add(23*time.Second + 874*time.Millisecond)
	_, body = get(t, srv.URL+"/")
	contains(t, "the overview", body, `<td class="n">15m24s</td>`)
}

// newMock is a mock clock at epoch.
func newMock() *clock.Mock {
	clk := clock.NewMock()
	clk.Set(epoch)
	return clk
}

// mount serves q's dashboard with opts on a test server, and returns its
// URL.
func mount(t *testing.T, q *litequeue.Queue, opts dashboard.Options) string {
	t.Helper()
	srv := httptest.NewServer(dashboard.New(q, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestJobs_SearchByKeyAndMetadata: the jobs list finds a job by its
// unique key and by a metadata key=value, and refuses a meta that is no
// pair.
func TestJobs_SearchByKeyAndMetadata(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		q := b.open(t)(litequeue.Options{})
		ctx := context.Background()
		a, err := q.Enqueue(ctx, "bill", 1, litequeue.UniqueKey("invoice-7"), litequeue.Metadata("tenant", "acme"))
		if err != nil {
			t.Fatal(err)
		}
		other, err := q.Enqueue(ctx, "bill", 2, litequeue.Metadata("tenant", "acme-2"))
		if err != nil {
			t.Fatal(err)
		}
		srv := mount(t, q, dashboard.Options{})
		rowRE := regexp.MustCompile(`<td class="n"><a href="/jobs/(\d+)">`)
		for _, tc := range []struct{ query, want string }{
			{"key=invoice-7", itoa(a.ID)},
			{"meta=tenant%3Dacme", itoa(a.ID)},
			{"meta=tenant%3Dacme-2", itoa(other.ID)},
			{"meta=tenant%3Dacm", ""},
		} {
			code, body := get(t, srv+"/jobs?"+tc.query)
			var got []string
			for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
				got = append(got, m[1])
			}
			if code != http.StatusOK || strings.Join(got, " ") != tc.want {
				t.Errorf("GET /jobs?%s: %d, jobs %v; want %q", tc.query, code, got, tc.want)
			}
		}
		if code, body := get(t, srv+"/jobs?meta=tenant"); code != http.StatusBadRequest || !strings.Contains(body, `meta=&#34;tenant&#34; is not a metadata key=value`) {
			t.Errorf("GET /jobs?meta=tenant: %d, want 400 naming the value\n%s", code, body)
		}
	})
}
