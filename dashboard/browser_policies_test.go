package dashboard_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// TestBrowser_Policies: in a real browser, the policies page of the flow
// shows the default policy its worker recorded, who recorded it and when,
// and its kinds with their options; that of a database where no worker
// ran says its policy is the library's default, recorded by no app.
func TestBrowser_Policies(t *testing.T) {
	f := newFlow(t, backends[0])
	srv := f.server(t, dashboard.Options{})
	ctx := browser(t)
	text := func(what, sel string) string {
		t.Helper()
		return strings.Join(strings.Fields(read(t, ctx, what, chromedp.Text(chromedp.CSS(sel)))), " ")
	}
	visit(t, ctx, "open the policies", chromedp.Navigate(srv.URL+"/policies"), chromedp.WaitVisible(chromedp.CSS("#kinds")))
	screenshot(t, ctx, "policies", false)
	if got, want := text("read the default policy", `section.policy[data-name="default"] p.source`), recordedBy(); got != want {
		t.Errorf("the default policy's source says %q, want %q", got, want)
	}
	kinds := text("read the kinds", "#kinds tbody")
	for _, want := range []string{
		"sync.push default – breaker at 2 failures in 1m (50% of runs), open 5m to 10m " + recordedBy(),
		"thumb.make default 2m at most 3 running, 10 starts per 1m " + recordedBy(),
	} {
		if !strings.Contains(kinds, want) {
			t.Errorf("the kinds do not say %q:\n%s", want, kinds)
		}
	}

	empty := httptest.NewServer(dashboard.New(backends[0].open(t)(litequeue.Options{Clock: clock.NewMock()}), dashboard.Options{}))
	t.Cleanup(empty.Close)
	visit(t, ctx, "open the policies of a database without workers", chromedp.Navigate(empty.URL+"/policies"),
		chromedp.WaitVisible(chromedp.CSS(`section.policy[data-name="default"]`)))
	if got := text("read the default policy", `section.policy[data-name="default"] p.source`); !strings.HasPrefix(got, "The library's defaults, not recorded by any app") {
		t.Errorf("the default policy's source says %q, want the library's defaults, recorded by no app", got)
	}
}
