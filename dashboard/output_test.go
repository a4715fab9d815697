package dashboard_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// hostileOutput is an output whose strings would be markup if the page
// did not escape them.
const hostileOutput = `{"html":"<b>bold</b><img src=x onerror=alert(1)>","n":1}`

// outputJobs runs a job that records hostileOutput and one that records
// none, and serves the dashboard of their queue.
func outputJobs(t *testing.T) (srv *httptest.Server, with, without int64) {
	t.Helper()
	q := newQueue(t)
	q.Handle("render", func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"none"` {
			return nil
		}
		return litequeue.RecordOutput(ctx, []byte(hostileOutput))
	})
	a, err := q.Enqueue(t.Context(), "render", "page")
	if err != nil {
		t.Fatal(err)
	}
	b, err := q.Enqueue(t.Context(), "render", "none")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(dashboard.New(q, dashboard.Options{}))
	t.Cleanup(srv.Close)
	return srv, a.ID, b.ID
}

// TestJob_ShowsOutput: a completed job's page shows its output, JSON
// indented and escaped; a job without one has no output section.
func TestJob_ShowsOutput(t *testing.T) {
	t.Parallel()
	srv, with, without := outputJobs(t)
	_, body := get(t, srv.URL+"/jobs/"+itoa(with))
	contains(t, "the job page", body, "<h2>Output <span class=\"quiet\">(JSON, 56 bytes)</span></h2>",
		"&#34;html&#34;: &#34;&lt;b&gt;bold&lt;/b&gt;&lt;img src=x onerror=alert(1)&gt;&#34;,\n  &#34;n&#34;: 1\n}")
	if _, body := get(t, srv.URL+"/jobs/"+itoa(without)); strings.Contains(body, "Output") {
		t.Error("the page of a job without output has an output section")
	}
}

// TestBrowser_OutputStaysInert opens a job's page in a real browser: its
// hostile output shows as the text it is, and makes no element.
func TestBrowser_OutputStaysInert(t *testing.T) {
	srv, with, _ := outputJobs(t)
	ctx := browser(t)
	visit(t, ctx, "open the job", chromedp.Navigate(srv.URL+"/jobs/"+itoa(with)), chromedp.WaitVisible(chromedp.CSS("pre.output")))
	want := "{\n  \"html\": \"<b>bold</b><img src=x onerror=alert(1)>\",\n  \"n\": 1\n}"
	if got := read(t, ctx, "read the output", chromedp.TextContent(chromedp.CSS("pre.output"))); got != want {
		t.Errorf("the output shows as %q, want %q", got, want)
	}
	if n := read(t, ctx, "count elements", chromedp.Evaluate[int](hostileElements)); n != 0 {
		t.Errorf("the output made %d elements", n)
	}
}

// TestJob_ShowsCheckpoint: a job's page shows its checkpoint, JSON
// indented and escaped, also once the job is dead.
func TestJob_ShowsCheckpoint(t *testing.T) {
	t.Parallel()
	body := runOnePage(t, func(ctx context.Context, job *litequeue.Job) error {
		if err := litequeue.Checkpoint(ctx, []byte(`{"part":2,"etag":"<x>"}`)); err != nil {
			return err
		}
		return litequeue.Permanent(errors.New("gateway gone"))
	})
	contains(t, "the job page", body, `<h2>Checkpoint <span class="quiet">(JSON, 23 bytes)</span></h2>`,
		"{\n  &#34;part&#34;: 2,\n  &#34;etag&#34;: &#34;&lt;x&gt;&#34;\n}", `<dd class="state dead" id="state">dead</dd>`)
}

// TestJob_ShowsProgress: a job's page shows the progress its handler
// reported.
func TestJob_ShowsProgress(t *testing.T) {
	t.Parallel()
	body := runOnePage(t, func(ctx context.Context, job *litequeue.Job) error {
		litequeue.Progress(ctx, 3, 12)
		return nil
	})
	contains(t, "the job page", body, `<dt>progress</dt><dd id="progress"><progress max="12" value="3"></progress> 3 of 12 (25%), `)
}

// runOnePage runs one job with handler h on a new queue, and returns its
// page on the queue's dashboard.
func runOnePage(t *testing.T, h litequeue.Handler) string {
	t.Helper()
	q := newQueue(t)
	q.Handle("k", h)
	j, err := q.Enqueue(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(dashboard.New(q, dashboard.Options{}))
	t.Cleanup(srv.Close)
	_, body := get(t, srv.URL+"/jobs/"+itoa(j.ID))
	return body
}
