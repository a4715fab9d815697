package dashboard_test

import (
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// TestBrowser_Graph is an operator's visit in a real browser: from the
// page of a job that waits, follow the link to its graph, see its four
// jobs drawn with their states, and replay the dead one from its box.
func TestBrowser_Graph(t *testing.T) {
	g := newDiamond(t, backends[0])
	srv := httptest.NewServer(dashboard.New(g.q, dashboard.Options{AllowWrites: true}))
	t.Cleanup(srv.Close)
	ctx := browser(t)

	visit(t, ctx, "open the waiting job", chromedp.Navigate(srv.URL+"/jobs/"+itoa(g.d)), chromedp.WaitVisible(chromedp.CSS("#graph-link")))
	visit(t, ctx, "follow the link to its graph", chromedp.Click(chromedp.CSS("#graph-link")), chromedp.WaitVisible(chromedp.CSS("svg.graph g.node")))
	screenshot(t, ctx, "graph", false)
	states := read(t, ctx, "read the boxes", chromedp.Evaluate[[]string](
		`Array.from(document.querySelectorAll("svg.graph g.node")).map(n => n.dataset.id + " " + n.querySelector("text.state").textContent)`))
	want := []string{itoa(g.a) + " completed", itoa(g.b) + " dead", itoa(g.c) + " completed", itoa(g.d) + " waiting"}
	if len(states) != len(want) {
		t.Fatalf("the boxes read %q, want %q", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Errorf("box %d reads %q, want %q", i, states[i], want[i])
		}
	}
	// Each box is drawn: it has a size on the screen.
	if n := read(t, ctx, "measure the boxes", chromedp.Evaluate[int](
		`Array.from(document.querySelectorAll("svg.graph g.node rect")).filter(r => r.getBoundingClientRect().width > 100).length`)); n != 4 {
		t.Errorf("%d boxes drawn wider than 100px, want 4", n)
	}
	if n := read(t, ctx, "count the arrows", chromedp.Evaluate[int](`document.querySelectorAll("svg.graph path.edge").length`)); n != 4 {
		t.Errorf("%d arrows, want 4", n)
	}

	g.fixed.Store(true)
	visit(t, ctx, "replay the dead job from its box",
		chromedp.Click(chromedp.CSS(`.graph-replay button[data-id="`+itoa(g.b)+`"]`)), chromedp.WaitVisible(chromedp.CSS("#state.pending")))
	if got := stateOf(t, g.q, g.b); got != litequeue.Pending {
		t.Errorf("the dead job is %s after the replay, want pending", got)
	}
	runAll(t, g.q)
	visit(t, ctx, "open the graph again", chromedp.Navigate(srv.URL+"/jobs/"+itoa(g.d)+"/graph"),
		chromedp.WaitVisible(chromedp.CSS(`g.node.completed[data-id="`+itoa(g.d)+`"]`)))
	if n := read(t, ctx, "count the replay forms", chromedp.Evaluate[int](`document.querySelectorAll(".graph-replay").length`)); n != 0 {
		t.Errorf("%d replay forms after every job completed, want 0", n)
	}
}
