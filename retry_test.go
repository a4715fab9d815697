package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_RetryScheduleToDead steps a job that always fails through its
// whole schedule with NextDue and RunDue, checking each run time, the
// history and the events.
func TestQueue_RetryScheduleToDead(t *testing.T) {
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{
		Clock:   clk,
		Retry:   litequeue.Policy{Base: time.Second, Ceiling: 5 * time.Second, MaxTries: 5, Jitter: litequeue.NoJitter},
		OnEvent: ev.record,
	})
	var runs []time.Time
	q.Handle("flaky", func(ctx context.Context, job *litequeue.Job) error {
		runs = append(runs, clk.Now())
		return errors.New("boom")
	}, litequeue.WithTimeout(0))
	ctx := context.Background()
	job := enqueue(t, q, "flaky", map[string]int{"n": 1})

	for {
		next, ok, err := q.NextDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		clk.Set(next)
		if got := runDue(t, q); got != 1 {
			t.Fatalf("RunDue at %v ran %d jobs, want 1", next, got)
		}
	}
	// Retries after attempts 1…4 wait 1s, 2s, 4s, then 5s (the ceiling).
	wantDelays := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 0}
	var want []time.Time
	at := epoch
	for _, d := range wantDelays {
		want = append(want, at)
		at = at.Add(d)
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Fatalf("run times (-want +got):\n%s", diff)
	}
	got := get(t, q, job.ID)
	if got.State != litequeue.Dead || got.Attempt != 5 || got.LastError != "boom" || !got.FinishedAt.Equal(want[4]) {
		t.Fatalf("job = %+v, want dead after 5 attempts with last error boom", got)
	}
	worker := workerName(t, q, job.ID)
	var wantHist []litequeue.Attempt
	for i, d := range wantDelays {
		wantHist = append(wantHist, litequeue.Attempt{
			Attempt: i + 1, StartedAt: want[i], FinishedAt: want[i], Outcome: litequeue.OutcomeFailed,
			Error: "boom", ErrorClass: "*errors.errorString", Delay: d, Worker: worker,
		})
	}
	if diff := cmp.Diff(wantHist, history(t, q, job.ID)); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	wantTypes := []string{"job.enqueued"}
	for range 4 {
		wantTypes = append(wantTypes, "job.started", "job.retry")
	}
	wantTypes = append(wantTypes, "job.started", "job.dead")
	if diff := cmp.Diff(wantTypes, ev.types()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func workerName(t *testing.T, q *litequeue.Queue, id int64) string {
	t.Helper()
	h := history(t, q, id)
	if len(h) == 0 || h[0].Worker == "" {
		t.Fatalf("job %d: no worker name in history", id)
	}
	return h[0].Worker
}
