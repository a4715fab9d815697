package litequeue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_Delete deletes a finished job of each kind, and a dead one,
// with its history: nothing else goes, idempotency keys included, each
// fires job.deleted, and no new job gets a deleted job's ID.
func TestQueue_Delete(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record})
	ids, release := jobsInEveryState(t, q)
	release()
	mark(t, q, "charge:job-"+itoa(ids[litequeue.Completed]), time.Hour)
	keep := ids[litequeue.Pending]
	for _, state := range []litequeue.State{litequeue.Completed, litequeue.Dead, litequeue.Discarded, litequeue.Cancelled} {
		id := ids[state]
		if err := q.Delete(ctx, id); err != nil {
			t.Fatalf("Delete of a %s job: %v", state, err)
		}
		if exists(t, q, id) || historyRows(t, q, id) != 0 {
			t.Errorf("the %s job %d or its history is still there", state, id)
		}
		if err := q.Delete(ctx, id); !errors.Is(err, litequeue.ErrNotFound) {
			t.Errorf("Delete of job %d again = %v, want ErrNotFound", id, err)
		}
	}
	if !exists(t, q, keep) || !exists(t, q, ids[litequeue.Running]) || historyRows(t, q, ids[litequeue.Running]) != 1 {
		t.Errorf("Delete took other jobs or their history with it")
	}
	if !seen(t, q, "charge:job-"+itoa(ids[litequeue.Completed])) {
		t.Errorf("Delete took an idempotency key with it")
	}
	if n := ev.count("job.deleted"); n != 4 {
		t.Errorf("%d job.deleted events, want 4: %v", n, ev.types())
	}
	// The newest job deleted: its ID is not handed out again.
	newest := ids[litequeue.Running]
	if err := q.Delete(ctx, newest); err != nil {
		t.Fatal(err)
	}
	if j := enqueue(t, q, "ok", nil); j.ID <= newest {
		t.Errorf("a new job got ID %d after job %d was deleted", j.ID, newest)
	}
}

// TestQueue_DeleteRefuses refuses a missing job and a live one, pending or
// running, with an error naming the state, and changes nothing.
func TestQueue_DeleteRefuses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record})
	ids, _ := jobsInEveryState(t, q)
	if err := q.Delete(ctx, 999); !errors.Is(err, litequeue.ErrNotFound) {
		t.Errorf("Delete(999) = %v, want ErrNotFound", err)
	}
	for _, state := range []litequeue.State{litequeue.Pending, litequeue.Running} {
		id := ids[state]
		before, h := get(t, q, id), history(t, q, id)
		want := "litequeue: delete job " + itoa(id) + ": it is " + string(state) + " (cancel it first)"
		if err := q.Delete(ctx, id); err == nil || err.Error() != want {
			t.Errorf("Delete of a %s job = %v, want %q", state, err, want)
		}
		unchanged(t, q, before, h)
	}
	if n := ev.count("job.deleted"); n != 0 {
		t.Errorf("%d job.deleted events after refusals", n)
	}
}
