package dashboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// TestBrowser_DeleteSelected: in a real browser, a delete of the rows
// selected in the jobs list asks first, and deletes nothing until the
// question is confirmed; then it deletes them.
func TestBrowser_DeleteSelected(t *testing.T) {
	f := newFlow(t, backends[0])
	srv := f.server(t, dashboard.Options{AllowWrites: true})
	ctx := browser(t)
	deadJobs := func() int {
		t.Helper()
		n, err := f.q.Count(context.Background(), litequeue.Filter{State: litequeue.Dead})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := deadJobs(); n != 2 {
		t.Fatalf("the flow has %d dead jobs, want 2", n)
	}
	visit(t, ctx, "select the dead jobs and delete them", chromedp.Navigate(srv.URL+"/jobs?state=dead"),
		chromedp.WaitVisible(chromedp.CSS("#select-all")), chromedp.Click(chromedp.CSS("#select-all")),
		chromedp.SetValue(chromedp.CSS("#action"), "delete"), chromedp.Click(chromedp.CSS("#act")),
		chromedp.WaitVisible(chromedp.CSS("#ask")))
	ask := read(t, ctx, "read the question", chromedp.Text(chromedp.CSS("#ask")))
	if !strings.Contains(ask, "Delete 2 selected jobs") || !strings.Contains(ask, "cannot be undone") {
		t.Errorf("the question says %q", ask)
	}
	if n := deadJobs(); n != 2 {
		t.Fatalf("%d dead jobs left before the confirmation, want 2: nothing deleted", n)
	}
	visit(t, ctx, "confirm", chromedp.Click(chromedp.CSS("#confirm")), chromedp.WaitVisible(chromedp.CSS("#message")))
	if got := read(t, ctx, "read the answer", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(got, "Deleted: 2 of 2 selected jobs.") {
		t.Errorf("the answer to the delete says %q", got)
	}
	if n := deadJobs(); n != 0 {
		t.Errorf("%d dead jobs left after the confirmed delete, want none", n)
	}
}
