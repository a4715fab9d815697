package litequeue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_UniqueKeyRace races Enqueue with one UniqueKey, and Mark of one
// key, from goroutines on one Queue and on two Queues on one file: exactly
// one job is inserted, every caller gets it, and no Mark fails.
func TestQueue_UniqueKeyRace(t *testing.T) {
	for _, queues := range []int{1, 2} {
		t.Run(map[int]string{1: "one queue", 2: "two queues"}[queues], func(t *testing.T) {
			clk := newMock()
			var ev events
			q1, path := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
			qs := []*litequeue.Queue{q1}
			if queues == 2 {
				qs = append(qs, openAt(t, path, litequeue.Options{Clock: clk, OnEvent: ev.record}))
			}
			const callers = 16
			jobs := make([]*litequeue.Job, callers)
			errs := make([]error, 2*callers)
			var wg sync.WaitGroup
			for i := range callers {
				q := qs[i%len(qs)]
				wg.Go(func() {
					jobs[i], errs[i] = q.Enqueue(context.Background(), "send", i, litequeue.UniqueKey("invoice-7"))
				})
				wg.Go(func() {
					errs[callers+i] = q.Mark(context.Background(), "invoice-7", time.Hour)
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			first := 0
			for _, j := range jobs {
				if !j.Duplicate {
					first++
				}
				if j.ID != jobs[0].ID {
					t.Fatalf("callers got jobs %d and %d, want one job", jobs[0].ID, j.ID)
				}
			}
			if first != 1 {
				t.Fatalf("%d callers inserted a job, want 1", first)
			}
			all, err := q1.List(context.Background(), litequeue.Filter{})
			if err != nil || len(all) != 1 {
				t.Fatalf("List = %d jobs, %v; want 1", len(all), err)
			}
			if n := ev.count("job.enqueued"); n != 1 {
				t.Fatalf("%d job.enqueued events, want 1", n)
			}
			for _, q := range qs {
				if !seen(t, q, "invoice-7") {
					t.Fatalf("key not seen after Mark")
				}
			}
		})
	}
}

// TestQueue_UniqueKeyFreed checks that a key names one live job only: once
// its job finished, the same key enqueues a new job.
func TestQueue_UniqueKeyFreed(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error { return nil })
	first := enqueue(t, q, "send", nil, litequeue.UniqueKey("k"))
	if dup := enqueue(t, q, "send", nil, litequeue.UniqueKey("k")); !dup.Duplicate || dup.ID != first.ID {
		t.Fatalf("second Enqueue = job %d duplicate=%v, want job %d duplicate", dup.ID, dup.Duplicate, first.ID)
	}
	runDue(t, q)
	if next := enqueue(t, q, "send", nil, litequeue.UniqueKey("k")); next.Duplicate || next.ID == first.ID {
		t.Fatalf("Enqueue after completion = job %d duplicate=%v, want a new job", next.ID, next.Duplicate)
	}
}
