package litequeue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
