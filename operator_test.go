package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_LimitsWindow: each kind with a limit, by kind, with its
// running runs and its starts in the window at now, counted across Queues
// on the database; a start leaves the count with its window; a kind
// without limits is left out, and a Queue without handlers knows none.
func TestQueue_LimitsWindow(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	g := newGate()
	q.Handle("thumb", g.handle, litequeue.MaxRunning(3), litequeue.RateLimit(5, time.Minute))
	q.Handle("resize", func(context.Context, *litequeue.Job) error { return nil }, litequeue.RateLimit(2, 10*time.Second))
	q.Handle("plain", func(context.Context, *litequeue.Job) error { return nil })
	ctx := context.Background()
	if got, err := q.Limits(ctx); err != nil || len(got) != 2 || got[0].Running != 0 || got[1].Starts != 0 {
		t.Fatalf("Limits before any run = %+v, %v", got, err)
	}
	enqueue(t, q, "resize", 1)
	runDue(t, q)
	clk.Add(5 * time.Second)
	enqueue(t, q, "thumb", 1)
	done := runDueAsync(q)
	waitClosed(t, "the thumb's run to start", g.started)
	got, err := q.Limits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []litequeue.LimitStats{
		{Kind: "resize", RateLimit: 2, RatePer: 10 * time.Second, Starts: 1},
		{Kind: "thumb", MaxRunning: 3, Running: 1, RateLimit: 5, RatePer: time.Minute, Starts: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Limits during the thumb's run (-want +got):\n%s", diff)
	}
	clk.Add(5 * time.Second) // the resize's start leaves its 10s window
	if got, err := q.Limits(ctx); err != nil || got[0].Starts != 0 || got[1].Starts != 1 {
		t.Errorf("Limits 10s after the resize = %+v, %v; want its start out of the window", got, err)
	}
	other := openAt(t, path, litequeue.Options{Clock: clk})
	if got, err := other.Limits(ctx); err != nil || got == nil || len(got) != 0 {
		t.Errorf("Limits of a Queue without handlers = %#v, %v; want none, not nil", got, err)
	}
	if got := other.Handled(); got == nil || len(got) != 0 {
		t.Errorf("Handled without handlers = %#v, want none, not nil", got)
	}
	if diff := cmp.Diff([]string{"plain", "resize", "thumb"}, q.Handled()); diff != "" {
		t.Errorf("Handled (-want +got):\n%s", diff)
	}
	close(g.release)
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
	if got, err := other.Limits(ctx); err != nil || len(got) != 0 {
		t.Errorf("Limits = %+v, %v", got, err)
	}
	if got, err := q.Limits(ctx); err != nil || got[1].Running != 0 {
		t.Errorf("Limits after the thumb's run = %+v, %v; want none running", got, err)
	}
}

// TestQueue_CurrentRun: a running job's worker, start, lease deadline and
// its handler's timeout; false for a job that is not running, and
// ErrNotFound for no job.
func TestQueue_CurrentRun(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk, VisibilityTimeout: time.Minute})
	g := newGate()
	q.Handle("thumb", g.handle, litequeue.WithTimeout(40*time.Second))
	ctx := context.Background()
	job := enqueue(t, q, "thumb", 1)
	if _, running, err := q.CurrentRun(ctx, job.ID); err != nil || running {
		t.Errorf("CurrentRun of a pending job: running %v, %v; want false", running, err)
	}
	done := runDueAsync(q)
	waitClosed(t, "the run to start", g.started)
	run, running, err := q.CurrentRun(ctx, job.ID)
	if err != nil || !running {
		t.Fatalf("CurrentRun of the running job: %v, %v", running, err)
	}
	host, _ := os.Hostname()
	worker := fmt.Sprintf("%s:%d", host, os.Getpid()) // RunDue's worker: the Queue's default name
	want := litequeue.RunInfo{Worker: worker, StartedAt: clk.Now(), LeaseUntil: clk.Now().Add(time.Minute), Timeout: 40 * time.Second}
	if diff := cmp.Diff(want, run, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("CurrentRun (-want +got):\n%s", diff)
	}
	other := openAt(t, path, litequeue.Options{Clock: clk})
	if run, running, err := other.CurrentRun(ctx, job.ID); err != nil || !running || run.Timeout != 0 || run.Worker != worker {
		t.Errorf("CurrentRun on a Queue without the handler = %+v, %v, %v; want the run, no timeout known", run, running, err)
	}
	close(g.release)
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
	if _, running, err := q.CurrentRun(ctx, job.ID); err != nil || running {
		t.Errorf("CurrentRun of the completed job: running %v, %v; want false", running, err)
	}
	if _, _, err := q.CurrentRun(ctx, job.ID+100); !errors.Is(err, litequeue.ErrNotFound) {
		t.Errorf("CurrentRun of no job: %v, want ErrNotFound", err)
	}
}

// TestList_ByUniqueKeyAndMetadata: a filter by unique key finds that job
// alone; one by metadata the jobs whose metadata holds every pair, a
// value matching whole (not as a prefix, nor another key's), with JSON's
// special characters as written.
func TestList_ByUniqueKeyAndMetadata(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	a := enqueue(t, q, "bill", 1, litequeue.UniqueKey("invoice-7"), litequeue.Metadata("tenant", "acme"), litequeue.Metadata("region", "eu"))
	b := enqueue(t, q, "bill", 2, litequeue.Metadata("tenant", "acme-2"), litequeue.Metadata("region", "eu"))
	c := enqueue(t, q, "bill", 3, litequeue.Metadata("owner", "acme"), litequeue.Metadata("note", `say "hi" <b>_%`))
	d := enqueue(t, q, "bill", 4, litequeue.UniqueKey("invoice-8"))
	ids := func(f litequeue.Filter) []int64 {
		t.Helper()
		jobs, err := q.List(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    litequeue.Filter
		want []int64
	}{
		{"unique key", litequeue.Filter{UniqueKey: "invoice-7"}, []int64{a.ID}},
		{"unique key of none", litequeue.Filter{UniqueKey: "invoice"}, nil},
		{"tenant acme", litequeue.Filter{Metadata: map[string]string{"tenant": "acme"}}, []int64{a.ID}},
		{"region eu", litequeue.Filter{Metadata: map[string]string{"region": "eu"}}, []int64{a.ID, b.ID}},
		{"both pairs", litequeue.Filter{Metadata: map[string]string{"region": "eu", "tenant": "acme-2"}}, []int64{b.ID}},
		{"special characters", litequeue.Filter{Metadata: map[string]string{"note": `say "hi" <b>_%`}}, []int64{c.ID}},
		{"a wildcard is text", litequeue.Filter{Metadata: map[string]string{"note": `say "hi" <b>__`}}, nil},
		{"key and metadata", litequeue.Filter{UniqueKey: "invoice-8", Metadata: map[string]string{"tenant": "acme"}}, nil},
		{"key alone", litequeue.Filter{UniqueKey: "invoice-8"}, []int64{d.ID}},
	} {
		if diff := cmp.Diff(tc.want, ids(tc.f)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestQueue_Breakers: the breakers of this Queue's handlers, closed until
// one opens; a Queue without handlers sees only the open one; a reset
// closes it again.
func TestQueue_Breakers(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("sync", doomed, litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: time.Minute}))
	q.Handle("plain", doomed)
	ctx := context.Background()
	closed := map[string]litequeue.BreakerStats{"sync": {State: "closed", Threshold: 1, Window: time.Minute}}
	if got, err := q.Breakers(ctx); err != nil || !cmp.Equal(closed, got) {
		t.Errorf("Breakers before a failure = %v, %v; want %v", got, err, closed)
	}
	enqueue(t, q, "sync", 1)
	runDue(t, q)
	opened := map[string]litequeue.BreakerStats{"sync": {State: "open", OpenedAt: clk.Now(), Until: clk.Now().Add(time.Minute), Trips: 1,
		Failures: 1, Threshold: 1, Window: time.Minute}}
	eq := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })
	if got, err := q.Breakers(ctx); err != nil || !cmp.Equal(opened, got, eq) {
		t.Errorf("Breakers after the failure = %v, %v; want %v", got, err, opened)
	}
	other := openAt(t, path, litequeue.Options{Clock: clk})
	if got, err := other.Breakers(ctx); err != nil || !cmp.Equal(opened, got, eq) {
		t.Errorf("Breakers of a Queue without handlers = %v, %v; want %v", got, err, opened)
	}
	if err := other.ResetBreaker(ctx, "sync"); err != nil {
		t.Fatal(err)
	}
	if got, err := q.Breakers(ctx); err != nil || !cmp.Equal(closed, got) {
		t.Errorf("Breakers after the reset = %v, %v; want %v", got, err, closed)
	}
	if got, err := other.Breakers(ctx); err != nil || got == nil || len(got) != 0 {
		t.Errorf("Breakers of a Queue without handlers after the reset = %#v, %v; want none, not nil", got, err)
	}
}
