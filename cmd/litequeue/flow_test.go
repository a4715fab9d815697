package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// graphDB is a database with a graph of jobs, built on a mock clock:
//
//	seed(1) → fetch(2) → resize(3), index(4) → publish(5)
//
// seed completed and was deleted (a gone node), fetch and index
// completed, resize died, and publish, which waits for resize under
// WaitIfFailed, is waiting.
type graphDB struct {
	db    string // a file's path or a server's URL
	clock *clock.Mock
}

// graphBackends builds the graph on a file and, where a server is
// configured, on the server, and runs fn on each.
func graphBackends(t *testing.T, fn func(t *testing.T, g graphDB)) {
	t.Run("file", func(t *testing.T) {
		fn(t, buildGraph(t, filepath.Join(t.TempDir(), "jobs.db"), func(db string, opts litequeue.Options) (*litequeue.Queue, error) {
			return litequeue.Open(db, opts)
		}))
	})
	t.Run("server", func(t *testing.T) {
		fn(t, buildGraph(t, pgtest.DSN(t), func(db string, opts litequeue.Options) (*litequeue.Queue, error) {
			return postgres.Open(context.Background(), db, opts)
		}))
	})
}

// buildGraph builds the graph in the database db, which open opens.
func buildGraph(t *testing.T, db string, open func(string, litequeue.Options) (*litequeue.Queue, error)) graphDB {
	t.Helper()
	g := graphDB{db: db, clock: clock.NewMock()}
	g.clock.Set(epoch)
	q, err := open(db, litequeue.Options{Clock: g.clock})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, kind := range []string{"seed", "fetch", "index"} {
		q.Handle(kind, func(context.Context, *litequeue.Job) error { return nil })
	}
	q.Handle("resize", func(context.Context, *litequeue.Job) error {
		return litequeue.Permanent(errors.New("image too large"))
	})
	ctx := t.Context()
	enqueue := func(kind string, opts ...litequeue.EnqueueOption) int64 {
		t.Helper()
		j, err := q.Enqueue(ctx, kind, nil, append(opts, litequeue.OnQueue("media"))...)
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	seed := enqueue("seed")
	fetch := enqueue("fetch", litequeue.DependsOn(seed))
	resize := enqueue("resize", litequeue.DependsOn(fetch))
	index := enqueue("index", litequeue.DependsOn(fetch))
	enqueue("publish", litequeue.DependsOnRule(litequeue.WaitIfFailed, resize), litequeue.DependsOn(index))
	for {
		n, err := q.RunDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if err := q.Delete(ctx, seed); err != nil {
		t.Fatal(err)
	}
	return g
}

// cli returns a test cli on the graph's database.
func (g graphDB) cli() *cli {
	c := testCLI("")
	c.db, c.clock = g.db, g.clock
	return c
}

func TestShow_Dependencies(t *testing.T) {
	graphBackends(t, func(t *testing.T, g graphDB) {
		golden(t, "show_dependencies.golden", mustRun(t, g.cli(), "show", "5").stdout)
		// Job 2 has run: its section, between the payload and the
		// history, whose worker is this machine's.
		r := mustRun(t, g.cli(), "show", "2")
		start, end := strings.Index(r.stdout, "\ndependencies"), strings.Index(r.stdout, "\nhistory")
		if start < 0 || end < start {
			t.Fatalf("show 2 has no dependencies before its history:\n%s", r.stdout)
		}
		golden(t, "show_dependencies_2.golden", r.stdout[start:end])

		r = mustRun(t, g.cli(), "show", "5", "--json")
		var got showJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v in:\n%s", err, r.stdout)
		}
		want := []dependencyJSON{
			{Edge: edgeJSON{Job: 5, On: 3, Rule: litequeue.WaitIfFailed, State: litequeue.EdgeOpen},
				Other: nodeJSON{ID: 3, Kind: "resize", Queue: "media", State: litequeue.Dead, Attempt: 1}},
			{Edge: edgeJSON{Job: 5, On: 4, Rule: litequeue.CancelIfFailed, State: litequeue.EdgeMet},
				Other: nodeJSON{ID: 4, Kind: "index", Queue: "media", State: litequeue.Completed, Attempt: 1}},
		}
		if diff := cmp.Diff(want, got.Dependencies); diff != "" {
			t.Errorf("dependencies of 5 (-want +got):\n%s", diff)
		}
		if got.Dependents == nil || len(got.Dependents) != 0 {
			t.Errorf("dependents of 5: %#v, want []", got.Dependents)
		}
		if !strings.Contains(mustRun(t, g.cli(), "show", "2", "--json").stdout, `"other": {
        "id": 1,
        "gone": true,`) {
			t.Errorf("show 2 --json does not show job 1 gone")
		}
	})
}

func TestFlow(t *testing.T) {
	graphBackends(t, func(t *testing.T, g graphDB) {
		// Every job of the graph shows the same graph.
		for _, id := range []string{"3", "5"} {
			r := mustRun(t, g.cli(), "flow", id)
			golden(t, "flow_"+id+".golden", r.stdout)
		}
	})
}

func TestFlow_JSON(t *testing.T) {
	graphBackends(t, func(t *testing.T, g graphDB) {
		r := mustRun(t, g.cli(), "flow", "4", "--json")
		var got flowJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v in:\n%s", err, r.stdout)
		}
		var order []string
		for _, n := range got.Nodes {
			order = append(order, fmt.Sprintf("%d:%d %s %s", n.Layer, n.ID, n.Kind, n.State))
		}
		want := []string{"0:1  ", "1:2 fetch completed", "2:3 resize dead", "2:4 index completed", "3:5 publish waiting"}
		if diff := cmp.Diff(want, order); diff != "" {
			t.Errorf("nodes in dependency order (-want +got):\n%s", diff)
		}
		if got.Job != 4 || len(got.Edges) != 5 || got.Edges[0] != (edgeJSON{Job: 2, On: 1, Rule: litequeue.CancelIfFailed, State: litequeue.EdgeMet}) {
			t.Errorf("job %d, edges %+v", got.Job, got.Edges)
		}
	})
}

func TestFlow_Errors(t *testing.T) {
	g := buildGraph(t, filepath.Join(t.TempDir(), "jobs.db"), func(db string, opts litequeue.Options) (*litequeue.Queue, error) {
		return litequeue.Open(db, opts)
	})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"flow", "99"}, exitFailure, "no job 99 in "},
		{[]string{"flow", "x7"}, exitUsage, `"x7"`},
		{[]string{"flow"}, exitUsage, "flow ID"},
	} {
		r := runCLI(t, g.cli(), tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("litequeue %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.want)
		}
	}
}

func TestList_Waiting(t *testing.T) {
	graphBackends(t, func(t *testing.T, g graphDB) {
		var jobs []jobJSON
		if err := json.Unmarshal([]byte(mustRun(t, g.cli(), "list", "--state", "waiting", "--json").stdout), &jobs); err != nil {
			t.Fatal(err)
		}
		if len(jobs) != 1 || jobs[0].ID != 5 || jobs[0].State != litequeue.Waiting {
			t.Errorf("waiting jobs: %+v, want job 5", jobs)
		}
		var st statsJSON
		if err := json.Unmarshal([]byte(mustRun(t, g.cli(), "stats", "--json").stdout), &st); err != nil {
			t.Fatal(err)
		}
		if got := st.Queues["media"].Waiting; got != 1 {
			t.Errorf("stats: %d waiting in media, want 1", got)
		}
	})
}
