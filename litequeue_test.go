package litequeue_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_NilContext calls every method that takes a context with a nil
// one: each refuses it with an error that says so, and the Queue goes on
// working (database/sql panics on a nil context while holding its pool's
// lock, which would leave every later call waiting forever).
func TestQueue_NilContext(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("task", func(context.Context, *litequeue.Job) error { return nil })
	job := enqueue(t, q, "task", nil)
	tx, err := q.DB().BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	var nilCtx context.Context
	calls := map[string]func() error{
		"Get":     func() error { _, err := q.Get(nilCtx, job.ID); return err },
		"History": func() error { _, err := q.History(nilCtx, job.ID); return err },
		"List":    func() error { _, err := q.List(nilCtx, litequeue.Filter{}); return err },
		"Count":   func() error { _, err := q.Count(nilCtx, litequeue.Filter{}); return err },
		"Health":  func() error { _, err := q.Health(nilCtx); return err },
		"FailuresLastHour": func() error {
			_, err := q.FailuresLastHour(nilCtx)
			return err
		},
		"Stats":     func() error { _, err := q.Stats(nilCtx); return err },
		"Seen":      func() error { _, err := q.Seen(nilCtx, "k"); return err },
		"Mark":      func() error { return q.Mark(nilCtx, "k", time.Hour) },
		"MarkTx":    func() error { return q.MarkTx(nilCtx, tx, "k", time.Hour) },
		"NextDue":   func() error { _, _, err := q.NextDue(nilCtx); return err },
		"RunDue":    func() error { _, err := q.RunDue(nilCtx); return err },
		"Work":      func() error { return q.Work(nilCtx, litequeue.WorkerOptions{}) },
		"Enqueue":   func() error { _, err := q.Enqueue(nilCtx, "task", nil); return err },
		"EnqueueTx": func() error { _, err := q.EnqueueTx(nilCtx, tx, "task", nil); return err },
		"EnqueueMany": func() error {
			_, err := q.EnqueueMany(nilCtx, "task", []any{1, 2})
			return err
		},
		"Cancel":     func() error { return q.Cancel(nilCtx, job.ID) },
		"Replay":     func() error { return q.Replay(nilCtx, job.ID) },
		"ReplayDead": func() error { _, err := q.ReplayDead(nilCtx, litequeue.Filter{}); return err },
		"RunNow":     func() error { return q.RunNow(nilCtx, job.ID) },
		"Delete":     func() error { return q.Delete(nilCtx, job.ID) },
		"CompleteTx": func() error { return q.CompleteTx(nilCtx, tx, job) },
	}
	for name, call := range calls {
		err := call()
		if err == nil || !strings.Contains(err.Error(), "nil context") {
			t.Errorf("%s(nil ctx) = %v, want an error naming the nil context", name, err)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Nothing was wedged or changed: the job is as it was, and runs.
	if got := get(t, q, job.ID); got.State != litequeue.Pending || got.Attempt != 0 {
		t.Fatalf("job after the nil-context calls: %s, attempt %d; want pending, attempt 0", got.State, got.Attempt)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue = %d runs, want 1", n)
	}
	if jobs, err := q.List(t.Context(), litequeue.Filter{}); err != nil || len(jobs) != 1 {
		t.Fatalf("List = %d jobs, %v; want 1 job", len(jobs), err)
	}
}
