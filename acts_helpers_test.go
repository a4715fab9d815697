package litequeue_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// jobsInEveryState makes one job in each state but pending on q: running
// (its handler waits until the returned release is called), completed,
// dead, discarded and cancelled; and a pending one, scheduled.
func jobsInEveryState(t *testing.T, q *litequeue.Queue) (ids map[litequeue.State]int64, release func()) {
	t.Helper()
	ctx := t.Context()
	q.Handle("ok", func(ctx context.Context, job *litequeue.Job) error { return nil })
	q.Handle("doomed", doomed)
	q.Handle("spam", func(ctx context.Context, job *litequeue.Job) error { return litequeue.ErrDiscard })
	ids = map[litequeue.State]int64{
		litequeue.Completed: enqueue(t, q, "ok", nil).ID,
		litequeue.Dead:      enqueue(t, q, "doomed", nil).ID,
		litequeue.Discarded: enqueue(t, q, "spam", nil).ID,
		litequeue.Cancelled: enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour)).ID,
		litequeue.Pending:   enqueue(t, q, "ok", nil, litequeue.Delay(2*time.Hour)).ID,
	}
	if err := q.Cancel(ctx, ids[litequeue.Cancelled]); err != nil {
		t.Fatal(err)
	}
	runDue(t, q)
	g := newGate()
	q.Handle("slow", g.handle)
	ids[litequeue.Running] = enqueue(t, q, "slow", nil).ID
	done := runDueAsync(q)
	<-g.started
	released := false
	release = func() {
		if !released {
			released = true
			close(g.release)
			if r := <-done; r.err != nil {
				t.Error(r.err)
			}
		}
	}
	t.Cleanup(release)
	return ids, release
}

// unchanged fails the test unless the job and its history read as they
// did before: a refused operation changed nothing.
func unchanged(t *testing.T, q *litequeue.Queue, before *litequeue.Job, history0 []litequeue.Attempt) {
	t.Helper()
	opt := cmp.AllowUnexported(litequeue.Job{})
	if diff := cmp.Diff(before, get(t, q, before.ID), opt); diff != "" {
		t.Errorf("job %d changed (-before +after):\n%s", before.ID, diff)
	}
	if diff := cmp.Diff(history0, history(t, q, before.ID)); diff != "" {
		t.Errorf("history of job %d changed (-before +after):\n%s", before.ID, diff)
	}
}
