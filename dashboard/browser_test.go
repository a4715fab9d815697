package dashboard_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

var updateDocs = flag.Bool("update-docs", false, "write the overview's and a job's screenshots to ../docs")

// browser starts a headless Chromium for the test, or skips the test
// when none is installed; under CI (CI=true) a missing Chromium fails it.
// It fails the test if a page ever opens a JavaScript dialog: the XSS
// payloads call alert. The options are added to Chromium's defaults.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed: CI runs the browser tests (.ci/run installs it with apt-get)")
		}
		t.Skip("chromium is not installed: the browser tests need it (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	var dialogs atomic.Int32
	opened := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range opened {
			if err != nil {
				return
			}
			dialogs.Add(1)
			t.Logf("a page opened a JavaScript dialog: %q", ev.Message)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
		}
	}()
	t.Cleanup(func() {
		if n := dialogs.Load(); n > 0 {
			t.Errorf("%d JavaScript dialogs opened: a payload ran as script", n)
		}
	})
	ctx, cancelRun := context.WithTimeout(ctx, time.Minute)
	t.Cleanup(cancelRun)
	return ctx
}

// screenshot saves the page as name.png in the test's artifact directory
// (kept with go test -artifacts), and in ../docs with -update-docs when
// docs is set.
func screenshot(t *testing.T, ctx context.Context, name string, docs bool) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	if docs && *updateDocs {
		if err := os.WriteFile(filepath.Join("..", "docs", "dashboard-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// visit runs the steps, failing the test if one fails.
func visit(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// read runs the action and returns its result, failing the test if it
// fails.
func read[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// hostileElements counts the elements in the page's main part that the
// hostile values would make if they were markup.
const hostileElements = `document.querySelectorAll("main img, main b, main i, main u, main script").length`

// TestBrowser_ReplayADeadJob is an operator's visit in a real browser:
// open the overview, follow the dead count of a queue to its dead jobs,
// open one, replay it and see it pending. It saves a screenshot of each
// page it passes.
func TestBrowser_ReplayADeadJob(t *testing.T) {
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	ctx := browser(t)

	visit(t, ctx, "open the overview", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	screenshot(t, ctx, "overview", true)
	visit(t, ctx, "follow the dead count of reports",
		chromedp.Click(chromedp.CSS(`a[href="/jobs?state=dead&queue=reports"]`)), chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	screenshot(t, ctx, "dead", false)
	visit(t, ctx, "open the newest dead report",
		chromedp.Click(chromedp.CSS(`a[href="/jobs/`+itoa(d.report.ID)+`"]`)), chromedp.WaitVisible(chromedp.CSS("#replay")))
	screenshot(t, ctx, "job", true)
	visit(t, ctx, "replay it", chromedp.Click(chromedp.CSS("#replay")), chromedp.WaitVisible(chromedp.CSS("#state.pending")))
	if got := read(t, ctx, "read the state", chromedp.Text(chromedp.CSS("#state"))); got != "pending" {
		t.Errorf("the job page shows state %q after the replay, want pending", got)
	}
	if got := stateOf(t, d.q, d.report.ID); got != litequeue.Pending {
		t.Errorf("the job is %s after the replay, want pending", got)
	}
	screenshot(t, ctx, "replayed", false)
	for _, p := range []struct{ path, wait, name string }{
		{"/jobs", "table.jobs", "jobs"},
		{"/dead/replay?kind=email.send", "#confirm", "confirm"},
		{"/policies", "svg.chart", "policies"},
	} {
		visit(t, ctx, "open "+p.path, chromedp.Navigate(srv.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.wait)))
		screenshot(t, ctx, p.name, false)
	}
}

// TestBrowser_PayloadsStayInert opens, in a real browser, the pages that
// show the hostile payload, error, kind and queue: no script runs (no
// alert opens a dialog), no element is made of them, and each shows as
// the text it is.
func TestBrowser_PayloadsStayInert(t *testing.T) {
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	ctx := browser(t)

	visit(t, ctx, "open the job", chromedp.Navigate(srv.URL+"/jobs/"+itoa(d.xss.ID)), chromedp.WaitVisible(chromedp.CSS("pre.payload")))
	if got := read(t, ctx, "read the payload", chromedp.TextContent(chromedp.CSS("pre.payload"))); got != xssPayload {
		t.Errorf("payload shown as %q, want the text %q", got, xssPayload)
	}
	if got := read(t, ctx, "read the error", chromedp.TextContent(chromedp.CSS("td.err pre"))); got != xssError {
		t.Errorf("error shown as %q, want the text %q", got, xssError)
	}
	if n := read(t, ctx, "count elements", chromedp.Evaluate[int](hostileElements)); n != 0 {
		t.Errorf("the job page has %d elements made of the hostile values", n)
	}
	screenshot(t, ctx, "xss-job", false)
	for _, path := range []string{"/", "/jobs?state=dead"} {
		visit(t, ctx, "open "+path, chromedp.Navigate(srv.URL+path), chromedp.WaitVisible(chromedp.CSS("main table")))
		text := read(t, ctx, "read "+path, chromedp.TextContent(chromedp.CSS("main")))
		if !strings.Contains(text, xssKind) || !strings.Contains(text, xssQueue) {
			t.Errorf("%s does not show the kind %q and the queue %q as text", path, xssKind, xssQueue)
		}
		if n := read(t, ctx, "count elements", chromedp.Evaluate[int](hostileElements)); n != 0 {
			t.Errorf("%s has %d elements made of the hostile values", path, n)
		}
	}
}

// TestBrowser_ForeignHostIsRefused is DNS rebinding in a real browser:
// rebind.test resolves to 127.0.0.1, as an attacker's name does once
// rebound, and the browser opens the dashboard through it. The dashboard,
// without a token, answers 421 and shows nothing of the queue; through
// 127.0.0.1 the same job's page shows.
func TestBrowser_ForeignHostIsRefused(t *testing.T) {
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	ctx := browser(t, chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"))
	jobPath := "/jobs/" + itoa(d.dead.ID)

	resp := read(t, ctx, "open the job through rebind.test", chromedp.NavigateResponse("http://rebind.test:"+port(t, srv.URL)+jobPath))
	if resp == nil || resp.Status != http.StatusMisdirectedRequest {
		t.Errorf("the job through rebind.test: %v, want status 421", resp)
	}
	text := read(t, ctx, "read the page", chromedp.Evaluate[string]("document.body.innerText"))
	if !strings.Contains(text, "misdirected") || strings.Contains(text, "hostile") || strings.Contains(text, "Replay") {
		t.Errorf("the page through rebind.test shows %q, want only the refusal", text)
	}
	if n := read(t, ctx, "count forms", chromedp.Evaluate[int]("document.forms.length")); n != 0 {
		t.Errorf("the page through rebind.test has %d forms", n)
	}
	visit(t, ctx, "open the job through 127.0.0.1", chromedp.Navigate(srv.URL+jobPath), chromedp.WaitVisible(chromedp.CSS("#replay")))
}

// TestBrowser_CrossSiteFormIsRefused: a page on another site (localhost,
// where the dashboard is 127.0.0.1) holds a form to replay a dead job,
// with the dashboard's own CSRF token, as if it had stolen it. The browser
// posts it with its Origin and Sec-Fetch-Site, and the dashboard refuses:
// the job stays dead.
func TestBrowser_CrossSiteFormIsRefused(t *testing.T) {
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	_, page := get(t, srv.URL+"/jobs/"+itoa(d.dead.ID))
	attack := fmt.Sprintf(`<!doctype html><form method="post" action="%s/jobs/%d/replay">`+
		`<input type="hidden" name="csrf" value="%s"><button id="go">win a prize</button></form>`, srv.URL, d.dead.ID, csrf(t, page))
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, attack)
	}))
	t.Cleanup(evil.Close)
	ctx := browser(t)
	visit(t, ctx, "open the other site", chromedp.Navigate("http://localhost:"+port(t, evil.URL)+"/"),
		chromedp.Click(chromedp.CSS("#go")), chromedp.WaitVisible(chromedp.CSS("body")))
	waitBrowser(t, ctx, "the dashboard's answer", `location.host === "`+strings.TrimPrefix(srv.URL, "http://")+`"`)
	text := read(t, ctx, "read the answer", chromedp.Evaluate[string]("document.body.innerText"))
	if !strings.Contains(text, "cross-origin") {
		t.Errorf("the dashboard answered the cross-site form with %q, want the refusal", text)
	}
	if got := stateOf(t, d.q, d.dead.ID); got != litequeue.Dead {
		t.Errorf("the job is %s after the cross-site form, want dead", got)
	}
}

// waitBrowser waits, with a real-time deadline, until the script is true
// in the page.
func waitBrowser(t *testing.T, ctx context.Context, what, script string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !read(t, ctx, "wait for "+what, chromedp.Evaluate[bool](script)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 10s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBrowser_LongErrorScrolls opens the page of a job whose error is
// long: each error shows in a block of bounded height that scrolls, so
// that the history stays in view.
func TestBrowser_LongErrorScrolls(t *testing.T) {
	q, srv, _ := hugeErrors(t, 1, 3)
	jobs, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Dead})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("dead jobs: %v, %v", jobs, err)
	}
	ctx := browser(t)
	visit(t, ctx, "open the job", chromedp.Navigate(srv.URL+"/jobs/"+itoa(jobs[0].ID)), chromedp.WaitVisible(chromedp.CSS("table.history")))
	blocks := read(t, ctx, "measure the error blocks", chromedp.Evaluate[[]struct {
		Height, ScrollHeight float64
		Overflow             string
	}](`[...document.querySelectorAll("pre.error")].map(e => ({Height: e.clientHeight, ScrollHeight: e.scrollHeight, Overflow: getComputedStyle(e).overflowY}))`))
	if len(blocks) != 4 {
		t.Fatalf("%d error blocks, want 4: the last error and the 3 runs", len(blocks))
	}
	for i, b := range blocks {
		if b.Height > 400 || b.ScrollHeight <= b.Height || b.Overflow != "auto" {
			t.Errorf("error block %d: %v px high of %v, overflow %q; want at most 400 px that scroll", i, b.Height, b.ScrollHeight, b.Overflow)
		}
	}
	screenshot(t, ctx, "long-error", false)
}
