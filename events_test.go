package litequeue_test

import (
	"context"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_OnEventPanics shows that a panicking OnEvent is recovered: the
// enqueue and the run still succeed.
func TestQueue_OnEventPanics(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{OnEvent: func(litequeue.Event) { panic("observer bug") }})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	j := enqueue(t, q, "k", nil)
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue ran %d, want 1", n)
	}
	if got := get(t, q, j.ID).State; got != litequeue.Completed {
		t.Fatalf("state %s, want completed", got)
	}
}

// TestQueue_EventsCarryTheJob checks an event's fields: the job after the
// change, the error and the delay of a retry, the commit time.
func TestQueue_EventsCarryTheJob(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy, OnEvent: ev.record})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.RetryAfter(time.Minute, context.DeadlineExceeded)
	})
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	retry := ev.list[2]
	if retry.Type != "job.retry" || retry.Job.ID != j.ID || retry.Job.State != litequeue.Pending ||
		retry.Err != "context deadline exceeded" || retry.Delay != time.Minute || !retry.At.Equal(epoch) ||
		!retry.Job.RunAt.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("retry event = %+v", retry)
	}
}
