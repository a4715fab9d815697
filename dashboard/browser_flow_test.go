package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// TestBrowser_FlowControl is an operator's visit in a real browser to a
// database with a paused queue, a paused kind, an open breaker, a limited
// kind running and a schedule: the overview says each; resume the queue
// and pause it again, reset the breaker; the schedules page shows the
// schedule; two rows of the jobs list are selected and cancelled.
func TestBrowser_FlowControl(t *testing.T) {
	f := newFlow(t, backends[0])
	srv := f.server(t, dashboard.Options{AllowWrites: true})
	ctx := browser(t)
	main := func(what string) string {
		t.Helper()
		return strings.Join(strings.Fields(read(t, ctx, what, chromedp.Text(chromedp.CSS("main")))), " ")
	}

	visit(t, ctx, "open the overview", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#flow")))
	screenshot(t, ctx, "flow", false)
	text := main("read the overview")
	for _, want := range []string{
		"emails paused since 2026-03-01 09:00:00Z (3m ago)",
		"kind report.build 2 2026-03-01 09:00:00Z (3m ago)",
		"sync.push open 2 of 2 in 1m 1 2026-03-01 09:00:00Z (3m ago) 2026-03-01 09:05:00Z (in 2m)",
		"thumb.make 1 of 3 1 of 10 per 1m",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the overview does not say %q:\n%s", want, text)
		}
	}
	paused := func() string {
		t.Helper()
		ps, err := f.q.Paused(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Queue+p.Kind)
		}
		return strings.Join(names, " ")
	}
	visit(t, ctx, "resume emails",
		chromedp.Click(chromedp.CSS(`button.resume[data-scope="queue"][data-name="emails"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button.pause[data-scope="queue"][data-name="emails"]`)))
	if got := paused(); got != "report.build" {
		t.Errorf("paused after resuming emails: %q, want report.build", got)
	}
	if strings.Contains(main("read the overview"), "emails paused") {
		t.Error("the overview still marks emails paused after the resume")
	}
	visit(t, ctx, "pause emails again",
		chromedp.Click(chromedp.CSS(`button.pause[data-scope="queue"][data-name="emails"]`)),
		chromedp.WaitVisible(chromedp.CSS(`button.resume[data-scope="queue"][data-name="emails"]`)))
	if got := paused(); got != "emails report.build" {
		t.Errorf("paused after pausing emails: %q, want emails report.build", got)
	}
	visit(t, ctx, "reset the breaker", chromedp.Click(chromedp.CSS(`button.reset[data-kind="sync.push"]`)),
		chromedp.WaitVisible(chromedp.CSS(`td.breaker.closed`)))
	if text := main("read the overview"); !strings.Contains(text, "sync.push closed 0 of 2 in 1m 0 – –") {
		t.Errorf("the overview does not show the breaker closed after the reset:\n%s", text)
	}
	if st, err := f.q.Stats(context.Background()); err != nil || len(st.Breakers) != 0 {
		t.Errorf("breakers after the reset: %v, %v; want none open", st.Breakers, err)
	}

	visit(t, ctx, "open the schedules", chromedp.Navigate(srv.URL+"/periodic"), chromedp.WaitVisible(chromedp.CSS(`tr.schedule[data-name="nightly"]`)))
	screenshot(t, ctx, "periodic", false)
	if text := main("read the schedules"); !strings.Contains(text, "nightly 0 3 * * * UTC report.build default one caught up 2026-03-01 03:00:00Z (6h3m ago) – – 2026-03-02 03:00:00Z (in 17h57m)") {
		t.Errorf("the schedules page says:\n%s", text)
	}

	visit(t, ctx, "select the reports and cancel them", chromedp.Navigate(srv.URL+"/jobs?kind=report.build"),
		chromedp.WaitVisible(chromedp.CSS("#select-all")), chromedp.Click(chromedp.CSS("#select-all")),
		chromedp.SetValue(chromedp.CSS("#action"), "cancel"), chromedp.Click(chromedp.CSS("#act")),
		chromedp.WaitVisible(chromedp.CSS("#message")))
	if got := main("read the answer"); !strings.Contains(got, "Cancelled: 2 of 2 selected jobs.") {
		t.Errorf("the answer to the cancel says %q", got)
	}
	reports, err := f.q.List(context.Background(), litequeue.Filter{Kind: "report.build"})
	if err != nil || len(reports) != 2 || reports[0].State != litequeue.Cancelled || reports[1].State != litequeue.Cancelled {
		t.Errorf("the reports after the cancel: %v, %v; want both cancelled", reports, err)
	}
	flowWorkers(t, ctx, f, srv.URL)
}

// flowWorkers goes on with the visit of TestBrowser_FlowControl: two Work
// loops start on queues of their own, and the workers, policies and
// throughput pages say what the flow has: both loops, the limits and the
// breaker its workers recorded, and the ends so far (two deaths of
// sync.push, two reports cancelled).
func flowWorkers(t *testing.T, ctx context.Context, f *flow, url string) {
	t.Helper()
	work(t, f.q, litequeue.WorkerOptions{Queues: []string{"archive"}, Concurrency: 2, Name: "archiver"})
	work(t, f.q, litequeue.WorkerOptions{Queues: []string{"backfill"}, Concurrency: 5, Name: "backfiller"})
	(&crew{q: f.q}).await(t, "both loops recorded", func(ws []litequeue.WorkerInfo) bool { return len(ws) == 2 })
	visit(t, ctx, "open the workers", chromedp.Navigate(url+"/workers"), chromedp.WaitVisible(chromedp.CSS("tr.worker")))
	names := read(t, ctx, "read the workers", chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll("tr.worker td:first-child")).map(td => td.textContent).sort().join(" ")`))
	if names != "archiver backfiller" {
		t.Errorf("the workers page lists %q, want archiver backfiller", names)
	}
	visit(t, ctx, "open the policies", chromedp.Navigate(url+"/policies"), chromedp.WaitVisible(chromedp.CSS("#kinds")))
	for kind, want := range map[string]string{
		"thumb.make": "at most 3 running, 10 starts per 1m",
		"sync.push":  "breaker",
	} {
		got := read(t, ctx, "read "+kind, chromedp.Text(chromedp.CSS(`#kinds tr[data-kind="`+kind+`"]`)))
		if !strings.Contains(got, want) {
			t.Errorf("the policies page says of %s %q, want %q in it", kind, got, want)
		}
	}
	visit(t, ctx, "open the throughput", chromedp.Navigate(url+"/throughput"), chromedp.WaitVisible(chromedp.CSS("#day-dead")))
	for id, want := range map[string]string{"#day-dead": "2", "#day-completed": "0"} {
		if got := read(t, ctx, "read "+id, chromedp.Text(chromedp.CSS(id))); got != want {
			t.Errorf("the throughput's %s says %q, want %s", id, got, want)
		}
	}
}

// TestBrowser_RefreshAndDark: the lists reload themselves until the box is
// unticked, which the browser remembers on the next page; with the system
// in dark mode the page is dark.
func TestBrowser_RefreshAndDark(t *testing.T) {
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	ctx := browser(t)
	visit(t, ctx, "open the jobs", chromedp.Navigate(srv.URL+"/jobs"), chromedp.WaitVisible(chromedp.CSS("#refresh")))
	read(t, ctx, "mark the page", chromedp.Evaluate[bool](`window.marked = true`))
	deadline := time.Now().Add(10 * time.Second)
	for { // a script run during the reload may fail: the page it ran in is gone
		if reloaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.marked !== true && document.readyState === "complete"`)); err == nil && reloaded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the jobs list did not reload itself in 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	visit(t, ctx, "untick auto-refresh", chromedp.WaitVisible(chromedp.CSS("#refresh")), chromedp.Click(chromedp.CSS("#refresh")))
	visit(t, ctx, "open the periodic page", chromedp.Navigate(srv.URL+"/periodic"), chromedp.WaitVisible(chromedp.CSS("#refresh")))
	if on := read(t, ctx, "read the box", chromedp.Evaluate[bool](`document.getElementById("refresh").checked`)); on {
		t.Error("auto-refresh is ticked on the next page after it was unticked")
	}
	bg := `getComputedStyle(document.body).backgroundColor`
	light := read(t, ctx, "read the light background", chromedp.Evaluate[string](bg))
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	dark := read(t, ctx, "read the dark background", chromedp.Evaluate[string](bg))
	if light != "rgb(246, 247, 248)" || dark != "rgb(21, 25, 28)" {
		t.Errorf("background light %s, dark %s; want rgb(246, 247, 248) and rgb(21, 25, 28)", light, dark)
	}
	visit(t, ctx, "open the overview in dark mode", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	fill := read(t, ctx, "read the deaths' colour", chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector("svg.chart .dead")).fill`))
	if fill != "rgb(255, 107, 91)" {
		t.Errorf("the failure chart's deaths are %s in dark mode, want the dark style's rgb(255, 107, 91)", fill)
	}
}
