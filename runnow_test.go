package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// TestQueue_RunNow makes a scheduled job and a job waiting to retry due at
// once: each gets a run_now row with its Attempt unchanged, fires
// job.run_now, and runs in the next RunDue.
func TestQueue_RunNow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy, OnEvent: ev.record})
	failures := 1
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if failures > 0 {
			failures--
			return errors.New("boom")
		}
		return nil
	})
	waiting := enqueue(t, q, "k", nil)
	runDue(t, q) // fails: due again in 10s
	scheduled := enqueue(t, q, "k", nil, litequeue.Delay(time.Hour))
	clk.Add(time.Second)
	for _, id := range []int64{waiting.ID, scheduled.ID} {
		if err := q.RunNow(ctx, id); err != nil {
			t.Fatalf("RunNow(%d): %v", id, err)
		}
		if got := get(t, q, id); got.State != litequeue.Pending || !got.RunAt.Equal(clk.Now()) {
			t.Errorf("job %d after RunNow: %s, due %v; want pending, due now (%v)", id, got.State, got.RunAt, clk.Now())
		}
	}
	if got := get(t, q, waiting.ID); got.Attempt != 1 || got.LastError != "boom" {
		t.Errorf("the waiting job after RunNow: attempt %d, last error %q; want 1, boom", got.Attempt, got.LastError)
	}
	want := litequeue.Attempt{Attempt: 1, StartedAt: clk.Now(), FinishedAt: clk.Now(), Outcome: litequeue.OutcomeRunNow}
	h := history(t, q, waiting.ID)
	if len(h) != 2 {
		t.Fatalf("history %+v, want the failure and the run_now row", h)
	}
	if diff := cmp.Diff(want, h[1], cmpopts.IgnoreFields(litequeue.Attempt{}, "Worker")); diff != "" || h[1].Worker == "" {
		t.Errorf("run_now row (-want +got):\n%s(worker %q)", diff, h[1].Worker)
	}
	if got := outcomes(history(t, q, scheduled.ID)); !cmp.Equal(got, []litequeue.Outcome{litequeue.OutcomeRunNow}) {
		t.Errorf("the scheduled job's history: %v", got)
	}
	if n := runDue(t, q); n != 2 {
		t.Errorf("RunDue ran %d jobs, want both", n)
	}
	for _, id := range []int64{waiting.ID, scheduled.ID} {
		if got := get(t, q, id); got.State != litequeue.Completed {
			t.Errorf("job %d is %s, want completed", id, got.State)
		}
	}
	if got := outcomes(history(t, q, waiting.ID)); !cmp.Equal(got, []litequeue.Outcome{litequeue.OutcomeFailed, litequeue.OutcomeRunNow, litequeue.OutcomeCompleted}) {
		t.Errorf("the waiting job's history: %v", got)
	}
	if n := ev.count("job.run_now"); n != 2 {
		t.Errorf("%d job.run_now events, want 2: %v", n, ev.types())
	}
}

// TestQueue_RunNowDue leaves a job that is already due as it is: no row,
// no event, and its place in the claim order kept.
func TestQueue_RunNowDue(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
	j := enqueue(t, q, "k", nil)
	clk.Add(time.Minute)
	if err := q.RunNow(t.Context(), j.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(t, q, j.ID); !got.RunAt.Equal(epoch) || len(history(t, q, j.ID)) != 0 || ev.count("job.run_now") != 0 {
		t.Errorf("RunNow of a due job: RunAt %v, %d history rows, events %v", got.RunAt, len(history(t, q, j.ID)), ev.types())
	}
}

// TestQueue_RunNowRefuses refuses a missing job, a running one and every
// finished one, with an error naming the state, and changes nothing.
func TestQueue_RunNowRefuses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record})
	ids, _ := jobsInEveryState(t, q)
	if err := q.RunNow(ctx, 999); !errors.Is(err, litequeue.ErrNotFound) {
		t.Errorf("RunNow(999) = %v, want ErrNotFound", err)
	}
	for _, state := range []litequeue.State{litequeue.Running, litequeue.Completed, litequeue.Dead, litequeue.Discarded, litequeue.Cancelled} {
		id := ids[state]
		before, h := get(t, q, id), history(t, q, id)
		want := "litequeue: run now job " + itoa(id) + ": it is " + string(state)
		if err := q.RunNow(ctx, id); err == nil || err.Error() != want {
			t.Errorf("RunNow of a %s job = %v, want %q", state, err, want)
		}
		unchanged(t, q, before, h)
	}
	if n := ev.count("job.run_now"); n != 0 {
		t.Errorf("%d job.run_now events after refusals", n)
	}
}
