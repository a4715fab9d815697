package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// crew is two live Work loops on one database, on two Queues with clocks
// of their own: "mailer" on q, whose clock clk the dashboard reads too,
// and "reports" on another Queue, whose clock stands still, as a hung
// process's would.
type crew struct {
	q   *litequeue.Queue
	clk *clock.Mock
}

// newCrew starts the crew's loops on b, stopped at the end of the test,
// and waits until both have recorded themselves.
func newCrew(t *testing.T, b backend) *crew {
	t.Helper()
	open := b.open(t)
	c := &crew{clk: clock.NewMock()}
	c.clk.Set(epoch)
	still := clock.NewMock()
	still.Set(epoch)
	c.q = open(litequeue.Options{Clock: c.clk})
	other := open(litequeue.Options{Clock: still})
	c.q.Handle("email.send", func(context.Context, *litequeue.Job) error { return nil })
	other.Handle("report.build", func(context.Context, *litequeue.Job) error { return nil })
	work(t, c.q, litequeue.WorkerOptions{Queues: []string{"emails", "digests"}, Concurrency: 3, Name: "mailer"})
	work(t, other, litequeue.WorkerOptions{Concurrency: 7, Name: "reports"})
	c.await(t, "both workers recorded", func(ws []litequeue.WorkerInfo) bool { return len(ws) == 2 })
	return c
}

// work runs a Work loop of q until the end of the test.
func work(t *testing.T, q *litequeue.Queue, opts litequeue.WorkerOptions) {
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, opts) }()
	t.Cleanup(func() { // before the Queue closes
		stop()
		if err := <-done; err != nil {
			t.Errorf("Work %s: %v", opts.Name, err)
		}
	})
}

// await waits until the workers satisfy cond, failing the test after 10s.
func (c *crew) await(t *testing.T, what string, cond func([]litequeue.WorkerInfo) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ws, err := c.q.Workers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if cond(ws) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not in 10s: %+v", what, ws)
		}
	}
}

// silence moves the mailer's clock past the reports' silence, and waits
// for the mailer's heartbeat at that time.
func (c *crew) silence(t *testing.T) {
	t.Helper()
	c.clk.Add(litequeue.WorkerSilentAfter + time.Minute)
	c.await(t, "the mailer's heartbeat", func(ws []litequeue.WorkerInfo) bool {
		i := slices.IndexFunc(ws, func(w litequeue.WorkerInfo) bool { return w.Name == "mailer" })
		return i >= 0 && ws[i].LastSeen.Equal(c.clk.Now())
	})
}

// server serves the crew's dashboard on a test server.
func (c *crew) server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(dashboard.New(c.q, dashboard.Options{Clock: c.clk}))
	t.Cleanup(srv.Close)
	return srv
}

// The rows of the crew's workers as the page's text reads, at epoch and
// once the mailer's clock moved on (silence).
var (
	hostPID       = func() string { h, _ := os.Hostname(); return h + " " + itoa(int64(os.Getpid())) }()
	mailerRow     = "mailer " + hostPID + " emails, digests email.send 0 of 3 2026-03-01 09:00:00Z (now) 2026-03-01 09:00:00Z (now) live"
	reportsRow    = "reports " + hostPID + " all report.build 0 of 7 2026-03-01 09:00:00Z (now) 2026-03-01 09:00:00Z (now) live"
	mailerLater   = "mailer " + hostPID + " emails, digests email.send 0 of 3 2026-03-01 09:00:00Z (4m ago) 2026-03-01 09:04:00Z (now) live"
	reportsSilent = "reports " + hostPID + " all report.build 0 of 7 2026-03-01 09:00:00Z (4m ago) 2026-03-01 09:00:00Z (4m ago) silent"
)

// TestWorkersPage: the workers page lists both loops with their queues,
// kinds and concurrency, and the overview counts them; once the mailer's
// clock is on past the silence, the page marks the other silent and the
// overview counts it.
func TestWorkersPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		c := newCrew(t, b)
		srv := c.server(t)
		page := func(path string) string {
			t.Helper()
			code, body := get(t, srv.URL+path)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", path, code, body)
			}
			return strings.ReplaceAll(strings.Join(strings.Fields(stripTags(body)), " "), " ,", ",")
		}
		for _, want := range []string{mailerRow, reportsRow} {
			if text := page("/workers"); !strings.Contains(text, want) {
				t.Errorf("the workers page does not say %q:\n%s", want, text)
			}
		}
		if text := page("/"); !strings.Contains(text, "2 workers") || strings.Contains(text, "silent") {
			t.Errorf("the overview does not say \"2 workers\", none silent:\n%s", text)
		}
		c.silence(t)
		for _, want := range []string{mailerLater, reportsSilent} {
			if text := page("/workers"); !strings.Contains(text, want) {
				t.Errorf("the workers page does not say %q:\n%s", want, text)
			}
		}
		if text := page("/"); !strings.Contains(text, "2 workers, 1 silent") {
			t.Errorf("the overview does not say \"2 workers, 1 silent\":\n%s", text)
		}
	})
}

// stripTags leaves a page's text: what is between its tags, each tag a
// space.
func stripTags(html string) string {
	var b strings.Builder
	in := false
	for _, r := range html {
		switch {
		case r == '<':
			in = true
			b.WriteByte(' ')
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestBrowser_Workers is an operator's visit in a real browser to a file
// with two live workers: the nav leads to the workers page, which lists
// both with their queues and concurrency; once the clock moves on past
// the silence, the reloaded page marks the one that stopped recording
// itself, and the overview's count leads there.
func TestBrowser_Workers(t *testing.T) {
	c := newCrew(t, backends[0])
	srv := c.server(t)
	ctx := browser(t)
	main := func(what string) string {
		t.Helper()
		return strings.Join(strings.Fields(read(t, ctx, what, chromedp.Text(chromedp.CSS("main")))), " ")
	}
	visit(t, ctx, "open the workers from the nav", chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.CSS(`nav a[href="/workers"]`)), chromedp.WaitVisible(chromedp.CSS("tr.worker")))
	text := main("read the workers")
	for _, want := range []string{mailerRow, reportsRow} {
		if !strings.Contains(text, want) {
			t.Errorf("the workers page does not say %q:\n%s", want, text)
		}
	}
	if n := read(t, ctx, "count the silent", chromedp.Evaluate[int](`document.querySelectorAll("tr.worker.silent").length`)); n != 0 {
		t.Errorf("%d workers marked silent at once, want none", n)
	}

	c.silence(t)
	visit(t, ctx, "follow the overview's count", chromedp.Navigate(srv.URL+"/"),
		chromedp.Click(chromedp.CSS(`#workers a`)), chromedp.WaitVisible(chromedp.CSS("tr.worker.silent")))
	screenshot(t, ctx, "workers", false)
	text = main("read the workers later")
	for _, want := range []string{mailerLater, reportsSilent} {
		if !strings.Contains(text, want) {
			t.Errorf("the workers page does not say %q:\n%s", want, text)
		}
	}
	silent := read(t, ctx, "read the silent row", chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll("tr.worker.silent td:first-child")).map(td => td.textContent).join(" ")`))
	if silent != "reports" {
		t.Errorf("the rows marked silent: %q, want reports", silent)
	}
}
