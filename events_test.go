package litequeue_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_OnEventPanics shows that a panicking OnEvent is recovered: the
// enqueue and the run still succeed.
func TestQueue_OnEventPanics(t *testing.T) {
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

// TestQueue_NextDueSeesLeases shows NextDue reporting a running job's lease
// expiry, so that a test can step to the rescue.
func TestQueue_NextDueSeesLeases(t *testing.T) {
	clk1, clk2 := newMock(), newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk1})
	q2 := openAt(t, path, litequeue.Options{Clock: clk2}) // handles nothing
	g := newGate()
	q1.Handle("k", g.handle)
	enqueue(t, q1, "k", nil)
	done := runDueAsync(q1)
	<-g.started
	next, ok, err := q2.NextDue(context.Background())
	if err != nil || !ok || !next.Equal(epoch.Add(litequeue.DefaultVisibilityTimeout)) {
		t.Fatalf("NextDue = %v %v %v, want the lease expiry", next, ok, err)
	}
	close(g.release)
	if r := <-done; r.n != 1 || r.err != nil {
		t.Fatalf("RunDue = %d, %v; want 1 run", r.n, r.err)
	}
	if _, ok, _ := q2.NextDue(context.Background()); ok {
		t.Fatal("NextDue reports work on an empty queue")
	}
	var types []string
	for _, a := range history(t, q2, 1) {
		types = append(types, string(a.Outcome))
	}
	if diff := cmp.Diff([]string{"completed"}, types); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
}
