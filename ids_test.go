package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_IDsNeverReused purges finished jobs, the newest one among them,
// and enqueues again: every new ID is greater than every ID handed out
// before, so nothing built from an old ID reaches a new job.
func TestQueue_IDsNeverReused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("ok", func(ctx context.Context, job *litequeue.Job) error { return nil })
	var highest int64
	for range 3 {
		highest = enqueue(t, q, "ok", nil).ID
	}
	runDue(t, q)
	clk.Add(litequeue.DefaultKeepFinished)
	runDue(t, q) // purges all three
	if exists(t, q, highest) {
		t.Fatalf("job %d not purged", highest)
	}
	j := enqueue(t, q, "ok", nil)
	many, err := q.EnqueueMany(ctx, "ok", []any{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []int64{j.ID, many[0].ID, many[1].ID} {
		if got <= highest {
			t.Errorf("new job got ID %d, handed out before (the highest was %d)", got, highest)
		}
	}
}

// TestQueue_IDAfterPurgeIsNotTheOldJob is issue 11's case: a handler keeps
// an idempotency key built from the job's ID for 7 days. Once retention
// purged the job, a new job must neither skip its side effect because of
// the old key nor be hit by a stale Cancel of the old ID.
func TestQueue_IDAfterPurgeIsNotTheOldJob(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	charges := 0
	q.Handle("charge", func(ctx context.Context, job *litequeue.Job) error {
		key := fmt.Sprintf("charge:job-%d", job.ID)
		done, err := q.Seen(ctx, key)
		if err != nil || done {
			return err
		}
		charges++
		return q.Mark(ctx, key, 7*24*time.Hour)
	})
	old := enqueue(t, q, "charge", nil)
	runDue(t, q)
	clk.Add(litequeue.DefaultKeepFinished)
	runDue(t, q) // purges the completed job; its key stays
	if exists(t, q, old.ID) {
		t.Fatalf("job %d not purged", old.ID)
	}

	next := enqueue(t, q, "charge", nil)
	if err := q.Cancel(ctx, old.ID); !errors.Is(err, litequeue.ErrNotFound) {
		t.Errorf("Cancel(%d) of the purged job: %v, want ErrNotFound", old.ID, err)
	}
	if got := get(t, q, next.ID); got.State != litequeue.Pending {
		t.Fatalf("the new job is %s after a Cancel of the purged job's ID", got.State)
	}
	runDue(t, q)
	if charges != 2 {
		t.Errorf("%d charges, want 2: the new job (ID %d) skipped its charge for the purged job's key", charges, next.ID)
	}
}
