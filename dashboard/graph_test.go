package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// diamond is a graph of four jobs: fetch(A) → resize(B), index(C) →
// publish(D). A and C completed, B died, and D, which waits for B under
// WaitIfFailed, waits. B succeeds once fixed is set.
type diamond struct {
	q          *litequeue.Queue
	a, b, c, d int64
	fixed      atomic.Bool // resize succeeds from now on
}

// newDiamond builds the diamond on a new database of the backend b.
func newDiamond(t *testing.T, b backend) *diamond {
	t.Helper()
	q := b.open(t)(litequeue.Options{})
	for _, kind := range []string{"fetch", "index", "publish"} {
		q.Handle(kind, func(context.Context, *litequeue.Job) error { return nil })
	}
	g := &diamond{q: q}
	q.Handle("resize", func(ctx context.Context, job *litequeue.Job) error {
		if !g.fixed.Load() {
			return litequeue.Permanent(errors.New("image too large"))
		}
		return nil
	})
	ctx := t.Context()
	enqueue := func(kind string, opts ...litequeue.EnqueueOption) int64 {
		t.Helper()
		j, err := q.Enqueue(ctx, kind, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	g.a = enqueue("fetch")
	g.b = enqueue("resize", litequeue.DependsOn(g.a))
	g.c = enqueue("index", litequeue.DependsOn(g.a))
	g.d = enqueue("publish", litequeue.DependsOnRule(litequeue.WaitIfFailed, g.b), litequeue.DependsOn(g.c))
	runAll(t, q)
	return g
}

// runAll runs q's due jobs until none is due.
func runAll(t *testing.T, q *litequeue.Queue) {
	t.Helper()
	for {
		n, err := q.RunDue(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

var (
	nodeRE = regexp.MustCompile(`<g class="node ([a-z_ ]+)" data-id="(\d+)"`)
	edgeRE = regexp.MustCompile(`<path class="edge ([a-z]+) ([a-z]+)" data-job="(\d+)" data-dep="(\d+)"`)
)

// drawn returns the nodes ("ID class") and the edges ("job→on rule state")
// of a graph page's SVG.
func drawn(page string) (nodes, edges []string) {
	for _, m := range nodeRE.FindAllStringSubmatch(page, -1) {
		nodes = append(nodes, m[2]+" "+m[1])
	}
	for _, m := range edgeRE.FindAllStringSubmatch(page, -1) {
		edges = append(edges, m[3]+"→"+m[4]+" "+m[1]+" "+m[2])
	}
	return nodes, edges
}

func TestGraph_Diamond(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		g := newDiamond(t, b)
		srv := httptest.NewServer(dashboard.New(g.q, dashboard.Options{AllowWrites: true}))
		t.Cleanup(srv.Close)

		code, page := get(t, srv.URL+"/jobs/"+itoa(g.c)+"/graph")
		if code != http.StatusOK {
			t.Fatalf("GET the graph: %d:\n%s", code, page)
		}
		nodes, edges := drawn(page)
		wantNodes := []string{itoa(g.a) + " completed", itoa(g.b) + " dead", itoa(g.c) + " completed focus", itoa(g.d) + " waiting"}
		if diff := cmp.Diff(wantNodes, nodes); diff != "" {
			t.Errorf("nodes in dependency order (-want +got):\n%s", diff)
		}
		wantEdges := []string{
			itoa(g.b) + "→" + itoa(g.a) + " cancel met", itoa(g.c) + "→" + itoa(g.a) + " cancel met",
			itoa(g.d) + "→" + itoa(g.b) + " wait open", itoa(g.d) + "→" + itoa(g.c) + " cancel met",
		}
		if diff := cmp.Diff(wantEdges, edges); diff != "" {
			t.Errorf("edges (-want +got):\n%s", diff)
		}
		// Layers left to right: A, then B and C one above the other, then D.
		for _, want := range []string{
			`data-id="` + itoa(g.a) + `" transform="translate(10 10)"`,
			`data-id="` + itoa(g.b) + `" transform="translate(260 10)"`,
			`data-id="` + itoa(g.c) + `" transform="translate(260 94)"`,
			`data-id="` + itoa(g.d) + `" transform="translate(510 10)"`,
			`<a href="/jobs/` + itoa(g.d) + `">`,
			`action="/jobs/` + itoa(g.b) + `/replay"`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the graph page has no %s:\n%s", want, page)
			}
		}
		if n := strings.Count(page, `class="graph-replay"`); n != 1 {
			t.Errorf("%d replay forms, want 1, the dead job's", n)
		}

		// The replay form of the dead node replays it: D goes on.
		g.fixed.Store(true)
		form := url.Values{"csrf": {csrf(t, page)}}
		if code, body := post(t, srv.URL+"/jobs/"+itoa(g.b)+"/replay", form); code != http.StatusSeeOther {
			t.Fatalf("replay from the graph: %d:\n%s", code, body)
		}
		runAll(t, g.q)
		if got := stateOf(t, g.q, g.d); got != litequeue.Completed {
			t.Errorf("D is %s after the replay of B, want completed", got)
		}
		_, page = get(t, srv.URL+"/jobs/"+itoa(g.a)+"/graph")
		if nodes, _ := drawn(page); !slices.Equal(nodes, []string{itoa(g.a) + " completed focus", itoa(g.b) + " completed", itoa(g.c) + " completed", itoa(g.d) + " completed"}) {
			t.Errorf("nodes after the replay: %q", nodes)
		}
	})
}

func TestGraph_ReadOnlyAndLinks(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		g := newDiamond(t, b)
		alone, err := g.q.Enqueue(t.Context(), "fetch", nil)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(dashboard.New(g.q, dashboard.Options{}))
		t.Cleanup(srv.Close)

		_, page := get(t, srv.URL+"/jobs/"+itoa(g.b)+"/graph")
		if strings.Contains(page, "graph-replay") {
			t.Error("a read-only dashboard offers a replay on the graph")
		}
		_, page = get(t, srv.URL+"/jobs/"+itoa(g.d))
		if !strings.Contains(page, `waits for 2, 0 wait for it: <a id="graph-link" href="/jobs/`+itoa(g.d)+`/graph">`) {
			t.Errorf("the page of D has no link to its graph:\n%s", page)
		}
		_, page = get(t, srv.URL+"/jobs/"+itoa(alone.ID))
		if strings.Contains(page, "graph-link") {
			t.Error("the page of a job without dependencies links to a graph")
		}
		for path, want := range map[string]string{
			"/jobs/999/graph": "no job 999",
			"/jobs/x/graph":   `no job &#34;x&#34;`,
		} {
			if code, body := get(t, srv.URL+path); code != http.StatusNotFound || !strings.Contains(body, want) {
				t.Errorf("GET %s: %d, want 404 saying %s", path, code, want)
			}
		}
	})
}

// TestGraph_Bounded draws at most 500 of a larger graph's jobs, and says so.
func TestGraph_Bounded(t *testing.T) {
	q := backends[0].open(t)(litequeue.Options{})
	parts := make([]litequeue.BatchJob, 520)
	for i := range parts {
		parts[i] = litequeue.BatchJob{Kind: "resize"}
	}
	jobs, callback, err := q.EnqueueBatch(t.Context(), litequeue.Batch{Jobs: parts, Callback: litequeue.BatchJob{Kind: "bind"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(dashboard.New(q, dashboard.Options{}))
	t.Cleanup(srv.Close)
	for _, id := range []int64{jobs[0].ID, callback.ID} {
		_, page := get(t, srv.URL+"/jobs/"+itoa(id)+"/graph")
		nodes, edges := drawn(page)
		if len(nodes) != 500 || len(edges) != 499 {
			t.Errorf("graph of %d: %d nodes and %d edges drawn, want 500 and 499", id, len(nodes), len(edges))
		}
		if !strings.Contains(page, `data-id="`+itoa(callback.ID)+`"`) || !strings.Contains(page, `data-id="`+itoa(id)+`"`) {
			t.Errorf("graph of %d: the job itself or the callback is not drawn", id)
		}
		if !strings.Contains(page, "521 jobs, 520 edges") || !strings.Contains(page, "; 21 more are left out") {
			t.Errorf("the page does not say what it leaves out:\n%s", page[:min(len(page), 2000)])
		}
	}
}
