package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// contains fails the test unless body holds each of wants.
func contains(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s does not show %q", what, w)
		}
	}
}

func TestOverview(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	code, body := get(t, srv.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("GET /: %d", code)
	}
	row := regexp.MustCompile(`\s+`)
	flat := row.ReplaceAllString(body, " ")
	contains(t, "the overview", flat,
		`<td><a href="/jobs?queue=billing">billing</a></td> <td class="n"><a href="/jobs?state=pending&amp;queue=billing">3</a></td>`,
		`<td class="n">15m</td>`, // the oldest invoice has waited since minute 45
		`<td class="n bad"><a href="/jobs?state=dead&amp;queue=emails">7</a></td> <td class="n">120</td>`,
		`<code>invoice.render</code>`, // no handler
		`<td><a href="/jobs?kind=email.send">email.send</a></td><td><code>*dashboard_test.smtpError</code></td><td class="n">59</td><td class="n bad">5</td>`,
		`<td><a href="/jobs?kind=report.build">report.build</a></td><td><code>*errors.errorString</code></td><td class="n">11</td><td class="n bad">6</td>`,
		`<svg class="chart"`, "Retries and deaths per minute", "−60m", "now",
		`<script src="/static/refresh.js" defer></script>`)
}

// TestJobs_Paging pages through 130 jobs newest first by following the
// pages' links, then back: every job once, in order.
func TestJobs_Paging(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	ctx := context.Background()
	var want []int64
	for i := range 130 {
		j, err := d.q.Enqueue(ctx, "page.me", i, litequeue.OnQueue("paging"))
		if err != nil {
			t.Fatal(err)
		}
		want = append([]int64{j.ID}, want...)
	}
	idRE := regexp.MustCompile(`<td class="n"><a href="/jobs/(\d+)">`)
	link := func(page, label string) string {
		m := regexp.MustCompile(`<a href="([^"]+)">` + label + `</a>`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return strings.ReplaceAll(m[1], "&amp;", "&")
	}
	var got []int64
	var pages []string
	next := "/jobs?queue=paging"
	for next != "" {
		_, page := get(t, srv.URL+next)
		pages = append(pages, page)
		for _, m := range idRE.FindAllStringSubmatch(page, -1) {
			var id int64
			for _, c := range m[1] {
				id = id*10 + int64(c-'0')
			}
			got = append(got, id)
		}
		next = link(page, "older →")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs over the pages (-want +got):\n%s", diff)
	}
	if len(pages) != 3 {
		t.Fatalf("%d pages of 130 jobs, want 3 of at most 50", len(pages))
	}
	if link(pages[0], "← newer") != "" || link(pages[2], "older →") != "" {
		t.Errorf("the first page links to newer jobs, or the last to older ones")
	}
	// Back from the last page: the middle page again.
	_, back := get(t, srv.URL+link(pages[2], "← newer"))
	if diff := cmp.Diff(idRE.FindAllString(pages[1], -1), idRE.FindAllString(back, -1)); diff != "" {
		t.Errorf("the page before the last (-forward +back):\n%s", diff)
	}
}

func TestJobs_Filters(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	_, body := get(t, srv.URL+"/jobs?state=dead&error=MAILBOX")
	if n := strings.Count(body, `class="state dead"`); n != 6 {
		t.Errorf("dead jobs whose error contains MAILBOX: %d rows, want the 6 emails", n)
	}
	contains(t, "the dead letters", body, "Dead letters", "Replay every match…", "Purge older…")
	code, body := get(t, srv.URL+"/jobs?state=lost")
	if code != http.StatusBadRequest || !strings.Contains(body, `state=&#34;lost&#34; is none of [waiting pending running dead completed discarded cancelled expired]`) {
		t.Errorf("GET /jobs?state=lost: %d, want 400 naming the states:\n%s", code, body)
	}
	if code, _ := get(t, srv.URL+"/jobs?before=-1"); code != http.StatusBadRequest {
		t.Errorf("GET /jobs?before=-1: %d, want 400", code)
	}
}

func TestJob_ShowsTheWholeHistory(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	reports, err := d.q.List(t.Context(), litequeue.Filter{Kind: "report.build", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, srv.URL+"/jobs/"+itoa(reports[0].ID))
	if code != http.StatusOK {
		t.Fatalf("GET the job: %d", code)
	}
	if n := strings.Count(body, "dial tcp 10.0.0.7:5432: connect: connection refused</pre></td>"); n != 3 {
		t.Errorf("the job page shows %d failed runs, want all 3", n)
	}
	contains(t, "the job page", body, "{\n  &#34;month&#34;: &#34;2026-02&#34;,\n  &#34;n&#34;: 0\n}", "(JSON, 25 bytes)",
		`<dd class="state dead" id="state">dead</dd>`, `<td class="n">5s</td>`, `<td class="n">10s</td>`)
	if code, _ := get(t, srv.URL+"/jobs/999999"); code != http.StatusNotFound {
		t.Errorf("GET a missing job: %d, want 404", code)
	}
	if code, _ := get(t, srv.URL+"/jobs/x"); code != http.StatusNotFound {
		t.Errorf("GET /jobs/x: %d, want 404", code)
	}
}

func TestJob_BytesShowSafely(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	j, err := d.q.Enqueue(t.Context(), "blob", []byte{0xff, 0x00, '<', 'b', '>'})
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, srv.URL+"/jobs/"+itoa(j.ID))
	contains(t, "the job page", body, "(bytes (hex), 5 bytes)", "ff 00 3c 62 3e", "|..&lt;b&gt;|")
}

// TestJob_ShowsMetadata shows a job's metadata on its page, in key order;
// a job without has no metadata section.
func TestJob_ShowsMetadata(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	j, err := d.q.Enqueue(t.Context(), "email.send", "ada@example.com",
		litequeue.Metadata("user", "ada"), litequeue.Metadata("request", "r-42"))
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, srv.URL+"/jobs/"+itoa(j.ID))
	contains(t, "the job page", body, "<h2>Metadata</h2>",
		"<dt><code>request</code></dt><dd><code>r-42</code></dd>\n<dt><code>user</code></dt><dd><code>ada</code></dd>")
	if _, body := get(t, srv.URL+"/jobs/"+itoa(d.later.ID)); strings.Contains(body, "Metadata") {
		t.Error("the page of a job without metadata has a metadata section")
	}
}

func TestDead_ReplayEveryMatch(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	_, page := get(t, srv.URL+"/dead/replay?kind=report.build&error=refused")
	contains(t, "the confirmation", page, `Replay 6 dead jobs of kind &#34;report.build&#34; whose error contains &#34;refused&#34;?`, "Replay 6")
	code, body := post(t, srv.URL+"/dead/replay", formOf(t, page))
	if code != http.StatusOK || !strings.Contains(body, "Replayed 6 dead jobs") {
		t.Fatalf("POST the replay: %d:\n%s", code, body)
	}
	if n, _ := d.q.Count(t.Context(), litequeue.Filter{State: litequeue.Pending, Kind: "report.build"}); n != 6 {
		t.Errorf("%d reports pending after the replay, want 6", n)
	}
	if n, _ := d.q.Count(t.Context(), litequeue.Filter{State: litequeue.Dead}); n != 8 {
		t.Errorf("%d jobs still dead, want the 8 others", n)
	}
}

func TestDead_PurgeOlderThan(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	_, page := get(t, srv.URL+"/dead/purge?older=30m")
	// The emails that died at minutes 0, 10, 20 and 30 of the hour, and the
	// reports, whose last try is a minute after their first, of 0, 10 and 20.
	contains(t, "the confirmation", page, "Delete 7 jobs dead for 30m or more, with their history?", "Delete 7")
	code, body := post(t, srv.URL+"/dead/purge", formOf(t, page))
	if code != http.StatusOK || !strings.Contains(body, "Deleted 7 dead jobs") {
		t.Fatalf("POST the purge: %d:\n%s", code, body)
	}
	if n, _ := d.q.Count(t.Context(), litequeue.Filter{State: litequeue.Dead}); n != 7 {
		t.Errorf("%d dead jobs left, want 7", n)
	}
	if code, _ := get(t, srv.URL+"/dead/purge?older=soon"); code != http.StatusBadRequest {
		t.Errorf("GET /dead/purge?older=soon: %d, want 400", code)
	}
}

func TestJob_Cancel(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	_, page := get(t, srv.URL+"/jobs/"+itoa(d.later.ID))
	token := csrf(t, page)
	if code, _ := post(t, srv.URL+"/jobs/"+itoa(d.later.ID)+"/cancel", url.Values{"csrf": {token}}); code != http.StatusSeeOther {
		t.Fatalf("POST the cancel: %d, want 303", code)
	}
	if got := stateOf(t, d.q, d.later.ID); got != litequeue.Cancelled {
		t.Errorf("the job is %s, want cancelled", got)
	}
	code, body := post(t, srv.URL+"/jobs/"+itoa(d.dead.ID)+"/cancel", url.Values{"csrf": {token}})
	if code != http.StatusConflict || !strings.Contains(body, "dead") {
		t.Errorf("POST the cancel of a dead job: %d, want 409 naming its state:\n%s", code, body)
	}
}

func TestPolicies(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	payments := litequeue.Policy{Backoff: litequeue.Linear, Base: 5 * time.Second, Ceiling: time.Minute, MaxTries: 4, Jitter: litequeue.NoJitter}
	srv := d.server(t, dashboard.Options{Policies: map[string]litequeue.Policy{"default": litequeue.DefaultPolicy(), "payments": payments}})
	_, body := get(t, srv.URL+"/policies")
	contains(t, "the policies", body, "<h2>default</h2>", "<h2>payments</h2>",
		"exponential from 2s, capped at 15m, 8 tries, full jitter.",
		`<td class="n">7</td><td class="n">2m8s</td><td class="n">4m14s</td>`,
		`<td class="n">3</td><td class="n">15s</td><td class="n">30s</td>`,
		"Retries of 1000 jobs failing together during a 30s outage")
	_, body = get(t, srv.URL+"/policies?jobs=50&outage=2m")
	contains(t, "the simulation", body, "Retries of 50 jobs failing together during a 2m outage")
	for _, q := range []string{"jobs=0", "jobs=1000000", "outage=0s", "outage=31d", "outage=soon"} {
		if code, _ := get(t, srv.URL+"/policies?"+q); code != http.StatusBadRequest {
			t.Errorf("GET /policies?%s: %d, want 400", q, code)
		}
	}
	_, body = get(t, srv.URL+"/policies?jobs=1000000")
	contains(t, "the refusal", body, "outside 1…100000")
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	code, body := get(t, srv.URL+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	contains(t, "the metrics", body,
		`litequeue_jobs{queue="billing",state="due"} 3`,
		`litequeue_oldest_due_seconds{queue="billing"} 900`,
		`litequeue_deaths_last_hour{error_class="*errors.errorString",kind="report.build"} 6`,
		`litequeue_unhandled_kinds{kind="invoice.render"} 1`)
}

// TestNew_Prefix mounts the dashboard under a prefix in an app's mux, as
// the package doc shows: its pages, links, assets and forms stay under it.
func TestNew_Prefix(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	mux := http.NewServeMux()
	mux.Handle("/queue/", dashboard.New(d.q, dashboard.Options{Prefix: "/queue", AllowWrites: true, Clock: d.clk}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "the app's", http.StatusTeapot) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, body := get(t, srv.URL+"/queue/")
	contains(t, "the overview", body, `href="/queue/static/style.css"`, `href="/queue/jobs?state=dead"`, `href="/queue/jobs?queue=billing"`)
	if code, _ := get(t, srv.URL+"/queue/static/style.css"); code != http.StatusOK {
		t.Errorf("GET the style sheet: %d", code)
	}
	_, page := get(t, srv.URL+"/queue/jobs/"+itoa(d.dead.ID))
	contains(t, "the job page", page, `action="/queue/jobs/`+itoa(d.dead.ID)+`/replay"`)
	code, _ := post(t, srv.URL+"/queue/jobs/"+itoa(d.dead.ID)+"/replay", url.Values{"csrf": {csrf(t, page)}})
	if code != http.StatusSeeOther || stateOf(t, d.q, d.dead.ID) != litequeue.Pending {
		t.Errorf("POST the replay under the prefix: %d, job %s", code, stateOf(t, d.q, d.dead.ID))
	}
	if code, _ := get(t, srv.URL+"/elsewhere"); code != http.StatusTeapot {
		t.Errorf("GET outside the prefix: %d, want the app's 418", code)
	}
}

// TestNew_ReadOnlyQueue serves a file opened with OpenReadOnly, as
// `litequeue serve` without writes may: every page reads.
func TestNew_ReadOnlyQueue(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	ro, err := litequeue.OpenReadOnly(d.path, litequeue.Options{Clock: d.clk})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	srv := httptest.NewServer(dashboard.New(ro, dashboard.Options{Clock: d.clk}))
	defer srv.Close()
	for _, path := range []string{"/", "/jobs", "/jobs?state=dead", "/jobs/" + itoa(d.report.ID), "/dead/replay", "/dead/purge?older=1h", "/policies", "/metrics"} {
		if code, body := get(t, srv.URL+path); code != http.StatusOK {
			t.Errorf("GET %s on a read-only queue: %d\n%s", path, code, body)
		}
	}
}

// hugeErrors makes n dead jobs that failed tries times each with an
// error of 2 MiB on two lines, as a handler that quotes a whole response
// does, and returns the queue, a server of its dashboard and the error.
func hugeErrors(t *testing.T, n, tries int) (*litequeue.Queue, *httptest.Server, string) {
	t.Helper()
	q := newQueue(t)
	line := strings.Repeat("upstream answered 502 with its whole page; ", 1<<20/43)
	text := line + "\n" + line
	q.Handle("huge", func(context.Context, *litequeue.Job) error { return litequeue.RetryAfter(0, errors.New(text)) })
	for range n {
		if _, err := q.Enqueue(t.Context(), "huge", nil, litequeue.MaxTries(tries)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(dashboard.New(q, dashboard.Options{}))
	t.Cleanup(srv.Close)
	return q, srv, text
}

// TestJobs_LongErrorsAreCut lists 10 jobs whose error is 2 MiB: each row
// shows the first line's first 80 characters, as the command's lists do,
// and the page stays small.
func TestJobs_LongErrorsAreCut(t *testing.T) {
	t.Parallel()
	const jobs = 10
	_, srv, text := hugeErrors(t, jobs, 1)
	_, page := get(t, srv.URL+"/jobs")
	if len(page) > 16<<10 {
		t.Errorf("the jobs page of %d jobs with long errors is %d bytes, want at most 16 KiB", jobs, len(page))
	}
	cell := `<td class="err">` + text[:79] + "…</td>"
	if n := strings.Count(page, cell); n != jobs {
		t.Errorf("%d rows show the error as %q, want all %d", n, cell, jobs)
	}

	// Characters, not bytes; a short first line says more follow.
	for err, want := range map[string]string{
		strings.Repeat("é", 81):      strings.Repeat("é", 79) + "…",
		strings.Repeat("é", 80):      strings.Repeat("é", 80),
		"connect: refused  \n\tdial": "connect: refused …",
	} {
		q := newQueue(t)
		q.Handle("fail", func(context.Context, *litequeue.Job) error { return litequeue.Permanent(errors.New(err)) })
		if _, err := q.Enqueue(t.Context(), "fail", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := q.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(dashboard.New(q, dashboard.Options{}))
		_, page := get(t, srv.URL+"/jobs")
		srv.Close()
		if !strings.Contains(page, `<td class="err">`+want+"</td>") {
			t.Errorf("the row of the error %q does not show %q", err, want)
		}
	}
}

// TestJob_LongErrorsAreBounded: the page of a job whose error was 2 MiB
// shows each as litequeue stored it, cut to MaxErrorText with the length
// it had, and stays small; an error stored whole before that bound (by an
// older litequeue) is cut by the page to as much, saying how long it is.
func TestJob_LongErrorsAreBounded(t *testing.T) {
	t.Parallel()
	q, srv, text := hugeErrors(t, 1, 3)
	jobs, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Dead})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("dead jobs: %v, %v", jobs, err)
	}
	_, page := get(t, srv.URL+"/jobs/"+itoa(jobs[0].ID))
	if len(page) > 128<<10 {
		t.Errorf("the page of a job with 4 long errors is %d bytes, want at most 128 KiB", len(page))
	}
	if n := strings.Count(page, `<pre class="error">`+text[:1000]); n != 4 {
		t.Errorf("%d blocks show the error's start, want 4: the last error and the 3 runs", n)
	}
	if n := strings.Count(page, fmt.Sprintf("[cut: %d bytes in all]", len(text))); n != 4 {
		t.Errorf("%d blocks show the length the stored error had, want 4", n)
	}
	// An error stored whole, as an older litequeue did.
	if _, err := q.DB().ExecContext(t.Context(), `UPDATE litequeue_jobs SET last_error = ? WHERE id = ?`, text, jobs[0].ID); err != nil {
		t.Fatal(err)
	}
	_, page = get(t, srv.URL+"/jobs/"+itoa(jobs[0].ID))
	if strings.Contains(page, text[:litequeue.MaxErrorText+1]) {
		t.Errorf("the page shows more than %d bytes of an error", litequeue.MaxErrorText)
	}
	if n := strings.Count(page, fmt.Sprintf("the first %d of %d bytes", litequeue.MaxErrorText, len(text))); n != 1 {
		t.Errorf("%d blocks say they show part of the error stored whole, want 1", n)
	}
}
