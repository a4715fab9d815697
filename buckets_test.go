package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_FailuresLastHour fails jobs of two kinds over more than an hour
// on the mock clock, and checks their counts per minute, kind and error
// class: the hour's runs, and no run finished before it or completed.
func TestQueue_FailuresLastHour(t *testing.T) {
	t.Parallel()
	clk := newMock() // epoch is on a whole minute
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: litequeue.Policy{Base: time.Hour, Ceiling: time.Hour, MaxTries: 2}})
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"temp"` {
			return &tempError{}
		}
		return litequeue.Permanent(errors.New("bad address"))
	})
	q.Handle("fetch", func(ctx context.Context, job *litequeue.Job) error { return nil })
	run := func(kind, payload string) {
		t.Helper()
		enqueue(t, q, kind, payload)
		runDue(t, q)
	}
	run("send", "temp") // at epoch: more than an hour before the end
	clk.Add(30 * time.Minute)
	run("send", "temp")      // retried
	run("send", "permanent") // dead
	run("fetch", "ok")       // completed: not a failure
	clk.Add(20*time.Minute + 30*time.Second)
	run("send", "temp")
	run("send", "temp")
	clk.Add(10 * time.Minute) // the end: epoch + 1h00m30s

	got, err := q.FailuresLastHour(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const class = "*litequeue_test.tempError"
	want := []litequeue.FailureCount{
		{Minute: epoch.Add(30 * time.Minute), Kind: "send", ErrorClass: "*errors.errorString", Deaths: 1},
		{Minute: epoch.Add(30 * time.Minute), Kind: "send", ErrorClass: class, Retries: 1},
		{Minute: epoch.Add(50 * time.Minute), Kind: "send", ErrorClass: class, Retries: 2},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
		t.Errorf("FailuresLastHour (-want +got):\n%s", diff)
	}
}
