package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// ranOrder records the order in which handlers ran, by job ID.
type ranOrder struct {
	mu  sync.Mutex
	ids []int64
}

func (r *ranOrder) handle(ctx context.Context, job *litequeue.Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, job.ID)
	return nil
}

func (r *ranOrder) got() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.ids...)
}

// TestDependsOn_WaitsThenRuns: a job that depends on two others is
// enqueued waiting, is never claimed while either is unfinished, and
// becomes pending in the commit of the last one's completion; Stats
// counts it waiting.
func TestDependsOn_WaitsThenRuns(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var order ranOrder
	q.Handle("step", order.handle)
	a := enqueue(t, q, "step", nil)
	b := enqueue(t, q, "step", nil, litequeue.Delay(time.Hour))
	c := enqueue(t, q, "step", nil, litequeue.DependsOn(a.ID, b.ID))
	if c.State != litequeue.Waiting {
		t.Fatalf("enqueued in state %s, want waiting", c.State)
	}
	if got := get(t, q, c.ID).State; got != litequeue.Waiting {
		t.Fatalf("stored in state %s, want waiting", got)
	}
	st, err := q.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if w := st.Queues["default"].Waiting; w != 1 {
		t.Fatalf("Stats counts %d waiting, want 1", w)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("first round ran %d jobs, want 1 (a; c waits for b)", n)
	}
	if got := get(t, q, c.ID).State; got != litequeue.Waiting {
		t.Fatalf("after one dependency: state %s, want waiting", got)
	}
	if err := q.RunNow(t.Context(), b.ID); err != nil {
		t.Fatal(err)
	}
	if n := runDue(t, q); n != 2 {
		t.Fatalf("second round ran %d jobs, want 2 (b, then c)", n)
	}
	if diff := cmp.Diff([]int64{a.ID, b.ID, c.ID}, order.got()); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
}

// failing is a handler that fails for good.
func failing(ctx context.Context, job *litequeue.Job) error {
	return litequeue.Permanent(errors.New("no"))
}

// TestDependsOn_Rules: a dependency that dies cancels its dependent under
// CancelIfFailed, with a history row that names it, and the dependent's
// own dependents after it; WaitIfFailed keeps the dependent waiting
// until a replay of the dependency completes; RunIfFailed runs it.
func TestDependsOn_Rules(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var order ranOrder
	q.Handle("step", order.handle)
	failNext := true
	q.Handle("flaky", func(ctx context.Context, job *litequeue.Job) error {
		if failNext {
			return failing(ctx, job)
		}
		return nil
	})
	dep := enqueue(t, q, "flaky", nil)
	cancelled := enqueue(t, q, "step", nil, litequeue.DependsOn(dep.ID))
	after := enqueue(t, q, "step", nil, litequeue.DependsOn(cancelled.ID))
	waits := enqueue(t, q, "step", nil, litequeue.DependsOnRule(litequeue.WaitIfFailed, dep.ID))
	runs := enqueue(t, q, "step", nil, litequeue.IfDependencyFails(litequeue.RunIfFailed), litequeue.DependsOn(dep.ID))
	if n := runDue(t, q); n != 2 {
		t.Fatalf("ran %d jobs, want 2 (the dependency, which dies, and the one that runs anyway)", n)
	}
	if diff := cmp.Diff([]int64{runs.ID}, order.got()); diff != "" {
		t.Fatalf("ran (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		job   *litequeue.Job
		cause string
	}{{cancelled, "dependency " + itoa(dep.ID) + " dead"}, {after, "dependency " + itoa(cancelled.ID) + " cancelled"}} {
		got := get(t, q, c.job.ID)
		h := history(t, q, c.job.ID)
		if got.State != litequeue.Cancelled || got.LastError != c.cause || len(h) != 1 ||
			h[0].Outcome != litequeue.OutcomeCancelled || h[0].Error != c.cause || h[0].ErrorClass != "dependency" {
			t.Fatalf("job %d: %s, %q, history %+v; want cancelled by %q", c.job.ID, got.State, got.LastError, h, c.cause)
		}
	}
	if got := get(t, q, waits.ID).State; got != litequeue.Waiting {
		t.Fatalf("WaitIfFailed: %s, want waiting", got)
	}
	failNext = false
	if err := q.Replay(t.Context(), dep.ID); err != nil {
		t.Fatal(err)
	}
	if n := runDue(t, q); n != 2 {
		t.Fatalf("after the replay ran %d jobs, want 2 (the dependency, then the one that waited)", n)
	}
	if diff := cmp.Diff([]int64{runs.ID, waits.ID}, order.got()); diff != "" {
		t.Fatalf("ran (-want +got):\n%s", diff)
	}
	deps, err := q.Dependencies(t.Context(), runs.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []litequeue.Dependency{{
		Edge:  litequeue.Edge{Job: runs.ID, On: dep.ID, Rule: litequeue.RunIfFailed, State: litequeue.EdgeMet},
		Other: litequeue.Node{ID: dep.ID, Kind: "flaky", Queue: "default", State: litequeue.Completed, Attempt: 1},
	}}
	if diff := cmp.Diff(want, deps); diff != "" {
		t.Fatalf("Dependencies (-want +got):\n%s", diff)
	}
}

// TestDependsOn_AtEnqueue: a dependency already completed counts as done,
// one already dead applies the rule at once (the job is enqueued
// cancelled); an unknown ID, a bad rule, a UniqueKey and a non-positive
// ID are refused, and nothing is inserted.
func TestDependsOn_AtEnqueue(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("ok", ok)
	q.Handle("fail", failing)
	done, dead := enqueue(t, q, "ok", nil), enqueue(t, q, "fail", nil)
	runDue(t, q)
	if got := enqueue(t, q, "ok", nil, litequeue.DependsOn(done.ID)); got.State != litequeue.Pending {
		t.Fatalf("on a completed job: %s, want pending", got.State)
	}
	born := enqueue(t, q, "ok", nil, litequeue.DependsOn(done.ID, dead.ID))
	if stored := get(t, q, born.ID); born.State != litequeue.Cancelled || stored.State != litequeue.Cancelled ||
		stored.LastError != "dependency "+itoa(dead.ID)+" dead" || born.LastError != stored.LastError {
		t.Fatalf("on a dead job: returned %s %q, stored %s %q; want cancelled", born.State, born.LastError, stored.State, stored.LastError)
	}
	if got := enqueue(t, q, "ok", nil, litequeue.DependsOnRule(litequeue.WaitIfFailed, dead.ID)); got.State != litequeue.Waiting {
		t.Fatalf("on a dead job, WaitIfFailed: %s, want waiting", got.State)
	}
	before := len(list(t, q, litequeue.Filter{}))
	for _, c := range []struct {
		opts []litequeue.EnqueueOption
		want string
	}{
		{[]litequeue.EnqueueOption{litequeue.DependsOn(done.ID, 1<<40)}, "dependency 1099511627776: litequeue: job not found"},
		{[]litequeue.EnqueueOption{litequeue.DependsOn(0)}, "dependency ID 0 is not a job's"},
		{[]litequeue.EnqueueOption{litequeue.DependsOnRule("later", done.ID)}, `dependency rule "later" is not one of`},
		{[]litequeue.EnqueueOption{litequeue.IfDependencyFails("later")}, `dependency rule "later" is not one of`},
		{[]litequeue.EnqueueOption{litequeue.IfDependencyFails("later"), litequeue.DependsOnRule(litequeue.RunIfFailed, done.ID)}, `dependency rule "later" is not one of`},
		{[]litequeue.EnqueueOption{litequeue.DependsOn(done.ID), litequeue.UniqueKey("k")}, `UniqueKey "k" with DependsOn`},
	} {
		_, err := q.Enqueue(t.Context(), "ok", nil, c.opts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("Enqueue = %v, want an error with %q", err, c.want)
		}
	}
	if _, err := q.Enqueue(t.Context(), "ok", nil, litequeue.DependsOn(1<<40)); !errors.Is(err, litequeue.ErrNotFound) {
		t.Fatalf("unknown dependency: %v, want ErrNotFound", err)
	}
	if after := len(list(t, q, litequeue.Filter{})); after != before {
		t.Fatalf("%d jobs after the refused enqueues, want %d", after, before)
	}
}

// TestDependsOn_CancelAndDelete: Cancel of a waiting job cancels it,
// dropping its open edge, and its dependents by their rules; deleting a dead dependency cancels the
// dependents that WaitIfFailed kept waiting: it can never complete now.
func TestDependsOn_CancelAndDelete(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("ok", ok)
	dep := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	mid := enqueue(t, q, "ok", nil, litequeue.DependsOn(dep.ID))
	leaf := enqueue(t, q, "ok", nil, litequeue.DependsOn(mid.ID))
	if err := q.Cancel(t.Context(), mid.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(t, q, mid.ID).State; got != litequeue.Cancelled {
		t.Fatalf("cancelled waiting job: %s", got)
	}
	if deps, err := q.Dependencies(t.Context(), mid.ID); err != nil || len(deps) != 1 || deps[0].Edge.State != litequeue.EdgeDropped {
		t.Fatalf("the cancelled job's edge: %+v, %v; want dropped", deps, err)
	}
	if got := get(t, q, leaf.ID); got.State != litequeue.Cancelled || got.LastError != "dependency "+itoa(mid.ID)+" cancelled" {
		t.Fatalf("its dependent: %s %q, want cancelled", got.State, got.LastError)
	}
	q.Handle("fail", failing)
	dead := enqueue(t, q, "fail", nil)
	waits := enqueue(t, q, "ok", nil, litequeue.DependsOnRule(litequeue.WaitIfFailed, dead.ID))
	runDue(t, q)
	if got := get(t, q, waits.ID).State; got != litequeue.Waiting {
		t.Fatalf("WaitIfFailed on a dead job: %s, want waiting", got)
	}
	if err := q.Delete(t.Context(), dead.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(t, q, waits.ID); got.State != litequeue.Cancelled || got.LastError != "dependency "+itoa(dead.ID)+" deleted" {
		t.Fatalf("WaitIfFailed on a deleted job: %s %q, want cancelled", got.State, got.LastError)
	}
	deps, err := q.Dependencies(t.Context(), waits.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 1 || !deps[0].Other.Gone || deps[0].Edge.State != litequeue.EdgeFailed {
		t.Fatalf("Dependencies of a job whose dependency is gone: %+v", deps)
	}
}

// TestGraph_Diamond: Graph reads the whole diamond from any of its jobs,
// and DependencyOutputs gives the last job its two inputs' outputs.
func TestGraph_Diamond(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("part", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.RecordOutput(ctx, map[string]int64{"id": job.ID})
	})
	var sum int64
	q.Handle("join", func(ctx context.Context, job *litequeue.Job) error {
		outs, err := q.DependencyOutputs(ctx, job.ID)
		if err != nil {
			return err
		}
		for id := range outs {
			var v map[string]int64
			if err := litequeue.DecodeDependencyOutput(outs, id, &v); err != nil {
				return err
			}
			sum += v["id"]
		}
		return nil
	})
	a := enqueue(t, q, "part", nil)
	b := enqueue(t, q, "part", nil, litequeue.DependsOn(a.ID))
	c := enqueue(t, q, "part", nil, litequeue.DependsOn(a.ID))
	d := enqueue(t, q, "join", nil, litequeue.DependsOn(b.ID, c.ID))
	lone := enqueue(t, q, "part", nil)
	for _, from := range []int64{a.ID, d.ID} {
		g, err := q.Graph(t.Context(), from)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, n := range g.Nodes {
			ids = append(ids, n.ID)
		}
		edges := []litequeue.Edge{
			{Job: b.ID, On: a.ID, Rule: litequeue.CancelIfFailed, State: litequeue.EdgeOpen},
			{Job: c.ID, On: a.ID, Rule: litequeue.CancelIfFailed, State: litequeue.EdgeOpen},
			{Job: d.ID, On: b.ID, Rule: litequeue.CancelIfFailed, State: litequeue.EdgeOpen},
			{Job: d.ID, On: c.ID, Rule: litequeue.CancelIfFailed, State: litequeue.EdgeOpen},
		}
		if diff := cmp.Diff([]int64{a.ID, b.ID, c.ID, d.ID}, ids); diff != "" {
			t.Fatalf("nodes from %d (-want +got):\n%s", from, diff)
		}
		if diff := cmp.Diff(edges, g.Edges); diff != "" {
			t.Fatalf("edges from %d (-want +got):\n%s", from, diff)
		}
	}
	if g, err := q.Graph(t.Context(), lone.ID); err != nil || len(g.Nodes) != 1 || len(g.Edges) != 0 {
		t.Fatalf("graph of a lone job: %+v, %v", g, err)
	}
	if _, err := q.Graph(t.Context(), 1<<40); !errors.Is(err, litequeue.ErrNotFound) {
		t.Fatalf("graph of no job: %v, want ErrNotFound", err)
	}
	if n := runDue(t, q); n != 5 {
		t.Fatalf("ran %d, want 5", n)
	}
	if sum != b.ID+c.ID {
		t.Fatalf("the join read %d, want the sum of its inputs' IDs %d", sum, b.ID+c.ID)
	}
}

// TestDependsOn_GraphInOneTx: a graph enqueued in one WriteTx commits as
// one; rolled back, none of it is there.
func TestDependsOn_GraphInOneTx(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("ok", ok)
	var ids []int64
	enqueueGraph := func(tx *sqlx.Tx) error {
		ids = ids[:0]
		a, err := q.EnqueueTx(t.Context(), tx, "ok", nil)
		if err != nil {
			return err
		}
		b, err := q.EnqueueTx(t.Context(), tx, "ok", nil, litequeue.DependsOn(a.ID))
		if err != nil {
			return err
		}
		ids = append(ids, a.ID, b.ID)
		return nil
	}
	errRollback := errors.New("rolled back")
	err := q.WriteTx(t.Context(), func(tx *sqlx.Tx) error {
		if err := enqueueGraph(tx); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	if n := len(list(t, q, litequeue.Filter{})); n != 0 {
		t.Fatalf("%d jobs after the rollback, want none", n)
	}
	if err := q.WriteTx(t.Context(), enqueueGraph); err != nil {
		t.Fatal(err)
	}
	if got := get(t, q, ids[1]).State; got != litequeue.Waiting {
		t.Fatalf("second job: %s, want waiting", got)
	}
	if n := runDue(t, q); n != 2 {
		t.Fatalf("ran %d, want 2", n)
	}
}

// TestDependsOn_ExpiryFromRelease: ExpireAfter counts from the moment a
// waiting job becomes due, not from its enqueue: a job released two
// hours after its enqueue, with an expiry of one hour, runs.
func TestDependsOn_ExpiryFromRelease(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("ok", ok)
	dep := enqueue(t, q, "ok", nil, litequeue.Delay(2*time.Hour))
	job := enqueue(t, q, "ok", nil, litequeue.DependsOn(dep.ID), litequeue.ExpireAfter(time.Hour))
	clk.Add(2 * time.Hour)
	if n := runDue(t, q); n != 2 {
		t.Fatalf("ran %d, want 2", n)
	}
	got := get(t, q, job.ID)
	if got.State != litequeue.Completed {
		t.Fatalf("job %s, want completed: its hour counts from its release", got.State)
	}
}

// TestDependsOn_CancelledEvents: the jobs that a failed dependency
// cancels fire job.cancelled, after the commit, each with its row as
// cancelled, and are counted in the throughput as cancelled.
func TestDependsOn_CancelledEvents(t *testing.T) {
	t.Parallel()
	var evs events
	q, _ := openQueue(t, litequeue.Options{OnEvent: evs.record})
	q.Handle("fail", failing)
	q.Handle("ok", ok)
	dep := enqueue(t, q, "fail", nil)
	a := enqueue(t, q, "ok", nil, litequeue.DependsOn(dep.ID))
	b := enqueue(t, q, "ok", nil, litequeue.DependsOn(a.ID))
	runDue(t, q)
	var cancelled []int64
	evs.mu.Lock()
	defer evs.mu.Unlock()
	for _, ev := range evs.list {
		if ev.Type == "job.cancelled" {
			if ev.Job.State != litequeue.Cancelled || !strings.HasPrefix(ev.Job.LastError, "dependency ") {
				t.Errorf("event of job %d: %s %q", ev.Job.ID, ev.Job.State, ev.Job.LastError)
			}
			cancelled = append(cancelled, ev.Job.ID)
		}
	}
	if diff := cmp.Diff([]int64{a.ID, b.ID}, cancelled); diff != "" {
		t.Fatalf("job.cancelled events (-want +got):\n%s", diff)
	}
	tp, err := q.Throughput(t.Context(), time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got := tp[len(tp)-1]; got.Cancelled != 2 || got.Dead != 1 {
		t.Fatalf("throughput %+v, want 2 cancelled and 1 dead", got)
	}
}

// TestDependsOn_EdgeDeletedMeanwhile, on a server: an open edge deleted
// (by raw SQL: litequeue deletes the edges only of jobs that stopped
// waiting, which drop them first) in a transaction that commits while its
// dependency's completion waits for the row does not stop the completion
// from releasing its other dependents.
func TestDependsOn_EdgeDeletedMeanwhile(t *testing.T) {
	if !serverRun() {
		t.Skip("a server's transactions only: a file's writers take turns")
	}
	t.Parallel()
	ctx := t.Context()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("ok", ok)
	dep := enqueue(t, q, "ok", nil)
	gone := enqueue(t, q, "ok", nil, litequeue.DependsOn(dep.ID))
	other := enqueue(t, q, "ok", nil, litequeue.DependsOn(dep.ID))
	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var pid int
	if err := tx.GetContext(ctx, &pid, `SELECT pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM litequeue_deps WHERE job_id = $1`, gone.ID); err != nil {
		t.Fatal(err)
	}
	done := runDueAsync(q)
	waitFor(t, "the completion to wait for the deleted edge's row", func() bool {
		var n int
		err := q.DB().GetContext(ctx, &n, `SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, pid)
		return err == nil && n > 0
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || r.n != 2 {
		t.Fatalf("RunDue = %d, %v; want 2 runs, the dependency's and its other dependent's", r.n, r.err)
	}
	if got := get(t, q, other.ID).State; got != litequeue.Completed {
		t.Fatalf("the other dependent: %s, want completed", got)
	}
}

// TestDependsOn_StrandedByRawSQL: a dependency completed (or deleted)
// by raw SQL, which tells no dependent, leaves them waiting only until
// the janitor's next sweep, which tells them as litequeue's own end
// would: the one on the completed job is released, the one on the
// deleted job cancelled; a completed one that retention purges first
// releases its dependent too.
func TestDependsOn_StrandedByRawSQL(t *testing.T) {
	fileOnly(t, "raw SQL on the file: a server's statements take $ placeholders")
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("ok", ok)
	a, b := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour)), enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	onA := enqueue(t, q, "ok", nil, litequeue.DependsOn(a.ID))
	onB := enqueue(t, q, "ok", nil, litequeue.DependsOn(b.ID))
	c := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	onC := enqueue(t, q, "ok", nil, litequeue.DependsOn(c.ID))
	if _, err := q.DB().Exec(`UPDATE litequeue_jobs SET state = 'completed', finished_at = 0 WHERE id = ?`, c.ID); err != nil {
		t.Fatal(err)
	}
	// Finished after the mock clock's now: retention keeps it.
	if _, err := q.DB().Exec(`UPDATE litequeue_jobs SET state = 'completed', finished_at = ? WHERE id = ?`, time.Now().UnixMilli(), a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := q.DB().Exec(`DELETE FROM litequeue_jobs WHERE id = ?`, b.ID); err != nil {
		t.Fatal(err)
	}
	if n := runDue(t, q); n != 0 { // its sweep, after the runs, releases onA for the next call
		t.Fatalf("first RunDue ran %d, want none", n)
	}
	if got := get(t, q, onB.ID); got.State != litequeue.Cancelled || got.LastError != "dependency "+itoa(b.ID)+" deleted" {
		t.Fatalf("the job on the deleted one: %s %q, want cancelled", got.State, got.LastError)
	}
	runDue(t, q)
	for _, j := range []*litequeue.Job{onA, onC} {
		if got := get(t, q, j.ID).State; got != litequeue.Completed {
			t.Fatalf("job %d, on a completed one: %s, want completed", j.ID, got)
		}
	}
	if exists(t, q, c.ID) {
		t.Fatalf("job %d, finished long ago, was not purged", c.ID)
	}
}

// TestDependsOn_EnqueueRacesEnd: jobs enqueued with a dependency at the
// moment its run ends (the settle of the run, side by side with the
// enqueue on a server) are never left waiting: round after round, each
// either sees the dependency completed at its enqueue or is released by
// its end.
func TestDependsOn_EnqueueRacesEnd(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	q.Handle("dep", func(ctx context.Context, job *litequeue.Job) error {
		started <- struct{}{}
		<-release
		return nil
	})
	q.Handle("ok", ok)
	for round := range 20 {
		dep := enqueue(t, q, "dep", nil)
		done := runDueAsync(q)
		<-started
		var wg sync.WaitGroup
		var dependents []int64
		var mu sync.Mutex
		for range 4 {
			wg.Go(func() {
				j, err := q.Enqueue(t.Context(), "ok", nil, litequeue.DependsOn(dep.ID))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				dependents = append(dependents, j.ID)
				mu.Unlock()
			})
		}
		close(release)
		wg.Wait()
		if r := <-done; r.err != nil {
			t.Fatal(r.err)
		}
		runDue(t, q)
		for _, id := range dependents {
			if got := get(t, q, id).State; got != litequeue.Completed {
				t.Fatalf("round %d: job %d, enqueued on job %d as it ended, is %s", round, id, dep.ID, got)
			}
		}
		release = make(chan struct{})
	}
}

// TestDependsOn_CompleteTx: a dependency completed in the app's own
// transaction (CompleteTx) releases its dependent in that commit, which
// the kept counts follow.
func TestDependsOn_CompleteTx(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var waitingAtCommit litequeue.State
	var dependent *litequeue.Job
	q.Handle("dep", func(ctx context.Context, job *litequeue.Job) error {
		if err := completeInAppTx(ctx, q, job); err != nil {
			return err
		}
		waitingAtCommit = get(t, q, dependent.ID).State // before the handler returns
		return nil
	})
	q.Handle("ok", ok)
	dep := enqueue(t, q, "dep", nil)
	dependent = enqueue(t, q, "ok", nil, litequeue.DependsOn(dep.ID))
	if n := runDue(t, q); n != 2 {
		t.Fatalf("ran %d, want 2", n)
	}
	if waitingAtCommit != litequeue.Pending {
		t.Fatalf("the dependent after the app's commit: %s, want pending", waitingAtCommit)
	}
	st, err := q.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if qs := st.Queues["default"]; qs.Completed != 2 || qs.Waiting != 0 || qs.Due != 0 {
		t.Fatalf("stats %+v, want 2 completed", qs)
	}
}
