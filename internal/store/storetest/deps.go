package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of dependencies: the rules of an edge, and exactly
// once across writers.

// dependOn inserts one job of kind "d" on queue "q" that depends on
// deps (each with rule), and returns its ID and the state it got.
func dependOn(t *testing.T, f *Fixture, w *store.Writer[struct{}], rule string, deps ...int64) (int64, string) {
	t.Helper()
	id, state, err := depend(t.Context(), f, w, rule, deps...)
	if err != nil {
		t.Fatal(err)
	}
	return id, state
}

// depend is dependOn for any goroutine: it returns its error.
func depend(ctx context.Context, f *Fixture, w *store.Writer[struct{}], rule string, deps ...int64) (id int64, state string, err error) {
	err = w.Do(&store.Op[struct{}]{Ctx: ctx, Fn: func(tx store.Execer) error {
		ids, err := f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q", Kind: "d", Payloads: [][]byte{nil}, MaxTries: 3})
		if err != nil {
			return err
		}
		ds := make([]store.Dep, len(deps))
		for i, d := range deps {
			ds[i] = store.Dep{ID: d, Rule: rule}
		}
		id = ids[0]
		state, _, err = store.Depend(ctx, tx, "q", "d", ids, ds, 100)
		return err
	}})
	return id, state, err
}

// end writes, with the writer w, the job id ended in state at 200, as a
// decision is stored (SetRow, which tells its dependents).
func end(ctx context.Context, f *Fixture, w *store.Writer[struct{}], id int64, state string) error {
	return w.Do(&store.Op[struct{}]{Ctx: ctx, Fn: func(tx store.Execer) error {
		row, err := store.LockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		finished(state, 200, "")(row)
		return store.SetRow(ctx, tx, row)
	}})
}

// stateOf reads the state of the job id.
func stateOf(t *testing.T, f *Fixture, id int64) string {
	t.Helper()
	row, err := store.JobByID(t.Context(), f.Reads, store.JobColumns, id)
	if err != nil {
		t.Fatal(err)
	}
	return row.State
}

// testDependEdges: each rule of an edge, at a dependency's end and at
// the enqueue of a job on a dependency that has ended; the kept counts
// follow every move.
func testDependEdges(t *testing.T, f *Fixture) {
	ctx := t.Context()
	for _, c := range []struct {
		rule, end string
		want      string // the dependent's state after the end
	}{
		{store.RuleCancel, "completed", "pending"},
		{store.RuleCancel, "dead", "cancelled"},
		{store.RuleCancel, "expired", "cancelled"},
		{store.RuleWait, "dead", "waiting"},
		{store.RuleWait, "discarded", "cancelled"},
		{store.RuleWait, "expired", "cancelled"},
		{store.RuleRun, "cancelled", "pending"},
	} {
		dep := putJob(t, f, "q", "k", nil)
		job, state := dependOn(t, f, f.Writer, c.rule, dep)
		if state != "waiting" || stateOf(t, f, job) != "waiting" {
			t.Fatalf("%s: enqueued %s, stored %s; want waiting", c.rule, state, stateOf(t, f, job))
		}
		if err := end(ctx, f, f.Writer, dep, c.end); err != nil {
			t.Fatal(err)
		}
		if got := stateOf(t, f, job); got != c.want {
			t.Errorf("rule %s, dependency %s: dependent %s, want %s", c.rule, c.end, got, c.want)
		}
		// The same, at the enqueue of a job on the ended dependency.
		if _, state := dependOn(t, f, f.Writer, c.rule, dep); state != c.want {
			t.Errorf("rule %s, on a dependency %s at enqueue: %s, want %s", c.rule, c.end, state, c.want)
		}
		checkCounts(t, f, c.rule+" "+c.end, 300)
		checkWaits(t, f, c.rule+" "+c.end)
	}
	// A job of two dependencies, one of which fails under rule cancel:
	// cancelled, its other edge is dropped, and stays so when the other
	// dependency completes.
	x, y := putJob(t, f, "q", "k", nil), putJob(t, f, "q", "k", nil)
	job, _ := dependOn(t, f, f.Writer, store.RuleCancel, x, y)
	if err := end(ctx, f, f.Writer, x, "dead"); err != nil {
		t.Fatal(err)
	}
	if err := end(ctx, f, f.Writer, y, "completed"); err != nil {
		t.Fatal(err)
	}
	var edges []string
	if err := f.Reads.SelectContext(ctx, &edges, `SELECT state FROM litequeue_deps WHERE job_id = ? ORDER BY depends_on`, job); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, f, job); got != "cancelled" || len(edges) != 2 || edges[0] != store.EdgeFailed || edges[1] != store.EdgeDropped {
		t.Errorf("a job whose first dependency died: %s, edges %q; want cancelled, failed and dropped", got, edges)
	}
	checkWaits(t, f, "two dependencies, one dead")
	var missing *store.NotFoundError
	err := f.Write(ctx, func(tx store.Execer) error {
		_, _, err := store.Depend(ctx, tx, "q", "d", []int64{1}, []store.Dep{{ID: 1 << 40, Rule: store.RuleCancel}}, 100)
		return err
	})
	if !errors.As(err, &missing) || missing.ID != 1<<40 {
		t.Fatalf("Depend on no job: %v, want a NotFoundError naming it", err)
	}
}

// checkWaits fails the test unless litequeue_waits holds a row for each
// waiting job, and for no other: the settle's probe (see waitsSeen)
// counts on it.
func checkWaits(t *testing.T, f *Fixture, step string) {
	t.Helper()
	var rows, waiting int
	if err := f.Reads.GetContext(t.Context(), &rows, `SELECT COUNT(*) FROM litequeue_waits`); err != nil {
		t.Fatal(err)
	}
	if err := f.Reads.GetContext(t.Context(), &waiting, `SELECT COUNT(*) FROM litequeue_jobs WHERE state = 'waiting'`); err != nil {
		t.Fatal(err)
	}
	if rows != waiting {
		t.Errorf("%s: %d rows of litequeue_waits, %d waiting jobs", step, rows, waiting)
	}
}

// testDependTogether: two dependencies of a job that end at the same
// moment in two writers' transactions (side by side on a server) release
// it exactly once, never leaving it waiting; a job enqueued on a
// dependency while the dependency ends in another writer's transaction
// is never left waiting either. Many rounds, as the overlap is the
// scheduler's.
func testDependTogether(t *testing.T, f *Fixture) {
	ctx := t.Context()
	other := f.OtherWriter(t)
	for round := range 30 {
		x, y := putJob(t, f, "q", "k", nil), putJob(t, f, "q", "k", nil)
		job, _ := dependOn(t, f, f.Writer, store.RuleCancel, x, y)
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, w := range []*store.Writer[struct{}]{f.Writer, other} {
			wg.Go(func() {
				<-start
				errs[i] = end(ctx, f, w, []int64{x, y}[i], "completed")
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := stateOf(t, f, job); got != "pending" {
			t.Fatalf("round %d: after both dependencies completed at once: %s, want pending", round, got)
		}

		z := putJob(t, f, "q", "k", nil)
		var later int64
		start = make(chan struct{})
		wg.Go(func() {
			<-start
			errs[0] = end(ctx, f, other, z, "completed")
		})
		wg.Go(func() {
			<-start
			later, _, errs[1] = depend(ctx, f, f.Writer, store.RuleCancel, z)
		})
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if got := stateOf(t, f, later); got != "pending" {
			t.Fatalf("round %d: enqueued while its dependency completed: %s, want pending", round, got)
		}
	}
	checkCounts(t, f, "after the rounds", 300)
	checkWaits(t, f, "after the rounds")
}
