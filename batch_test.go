package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestEnqueueBatch_Callback: a batch of 1,000 jobs, run by two Queues'
// Work loops side by side (two processes' worth of writers), fires its
// callback exactly once, after every job of the group has ended, and the
// callback counts them by their ends; with AllSucceeded, the first
// failure cancels the callback instead.
func TestEnqueueBatch_Callback(t *testing.T) {
	t.Parallel()
	q1, path := openQueue(t, litequeue.Options{})
	q2 := openAt(t, path, litequeue.Options{})
	const n = 1000
	var mu sync.Mutex
	var calls []map[litequeue.State]int
	var unfinished atomic.Int64
	for _, q := range []*litequeue.Queue{q1, q2} {
		q.Handle("part", func(ctx context.Context, job *litequeue.Job) error {
			var i int
			if err := job.Decode(&i); err != nil {
				return err
			}
			if i%10 == 0 {
				return litequeue.Permanent(errors.New("part failed"))
			}
			return nil
		})
		q.Handle("done", func(ctx context.Context, job *litequeue.Job) error {
			counts, err := q.DependencyCounts(ctx, job.ID)
			if err != nil {
				return err
			}
			st, err := q.Stats(ctx)
			if err != nil {
				return err
			}
			unfinished.Store(int64(st.Queues["default"].Due + st.Queues["default"].Running - 1))
			mu.Lock()
			calls = append(calls, counts)
			mu.Unlock()
			return nil
		})
	}
	parts := make([]litequeue.BatchJob, n)
	for i := range parts {
		parts[i] = litequeue.BatchJob{Kind: "part", Payload: i}
	}
	jobs, cb, err := q1.EnqueueBatch(t.Context(), litequeue.Batch{Jobs: parts, Callback: litequeue.BatchJob{Kind: "done"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != n || cb.State != litequeue.Waiting {
		t.Fatalf("%d jobs and a callback %s, want %d and waiting", len(jobs), cb.State, n)
	}
	stops := []func() error{
		startWork(t, q1, litequeue.WorkerOptions{Concurrency: 8}),
		startWork(t, q2, litequeue.WorkerOptions{Concurrency: 8}),
	}
	waitFor(t, "the callback to complete", func() bool { return get(t, q1, cb.ID).State == litequeue.Completed })
	for _, stop := range stops {
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	want := []map[litequeue.State]int{{litequeue.Completed: n - n/10, litequeue.Dead: n / 10}}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Fatalf("callback calls (-want +got):\n%s", diff)
	}
	if u := unfinished.Load(); u != 0 {
		t.Fatalf("the callback ran with %d other jobs due or running, want none", u)
	}

	jobs, cb, err = q1.EnqueueBatch(t.Context(), litequeue.Batch{Jobs: parts[:20], Callback: litequeue.BatchJob{Kind: "done"}, AllSucceeded: true})
	if err != nil {
		t.Fatal(err)
	}
	runDue(t, q1)
	got := get(t, q1, cb.ID)
	if got.State != litequeue.Cancelled || got.LastError != "dependency "+itoa(jobs[0].ID)+" dead" || len(calls) != 1 {
		t.Fatalf("AllSucceeded with failures: callback %s %q after %d calls; want cancelled by job %d, not run", got.State, got.LastError, len(calls), jobs[0].ID)
	}
}

// TestEnqueueBatch_Refuses: a batch with no jobs, or one whose job or
// callback Enqueue would refuse, adds nothing.
func TestEnqueueBatch_Refuses(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for _, c := range []struct {
		b    litequeue.Batch
		want string
	}{
		{litequeue.Batch{Callback: litequeue.BatchJob{Kind: "cb"}}, "0 jobs is outside 1…10000"},
		{litequeue.Batch{Jobs: []litequeue.BatchJob{{Kind: "a"}, {Kind: ""}}, Callback: litequeue.BatchJob{Kind: "cb"}}, "empty kind"},
		{litequeue.Batch{Jobs: []litequeue.BatchJob{{Kind: "a"}}, Callback: litequeue.BatchJob{Kind: "cb", Options: []litequeue.EnqueueOption{litequeue.UniqueKey("k")}}}, `UniqueKey "k" with DependsOn`},
		{litequeue.Batch{Jobs: []litequeue.BatchJob{{Kind: "a"}}, Callback: litequeue.BatchJob{Kind: "cb", Options: []litequeue.EnqueueOption{litequeue.DependsOn(1 << 40)}}}, "job not found"},
	} {
		_, _, err := q.EnqueueBatch(t.Context(), c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("EnqueueBatch = %v, want an error with %q", err, c.want)
		}
	}
	if jobs := list(t, q, litequeue.Filter{}); len(jobs) != 0 {
		t.Fatalf("%d jobs after refused batches, want none", len(jobs))
	}
}
