package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_RecountJobs_EveryPath writes jobs through every path that
// changes them — Enqueue, EnqueueMany, EnqueueTx committed and rolled
// back, the claim and every end of a run (completed, retried, dead,
// discarded, panicked), Cancel, Delete, Replay, RunNow, PurgeDead, the
// retention of finished jobs, expiry, the rescue of an expired lease, and
// Copy into another database — and after each a recount finds every kept
// count right. After the app's own UPDATE and DELETE, counted only by a
// server's triggers, a file's Health reports the difference and a recount
// mends it.
func TestQueue_RecountJobs_EveryPath(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, KeepFinished: time.Hour, DeadTTL: time.Hour,
		Retry: litequeue.Policy{MaxTries: 2, Jitter: litequeue.NoJitter}})
	fails := errors.New("fails")
	q.Handle("ok", func(context.Context, *litequeue.Job) error { return nil })
	q.Handle("fail", func(context.Context, *litequeue.Job) error { return fails })
	q.Handle("discard", func(context.Context, *litequeue.Job) error { return litequeue.ErrDiscard })
	q.Handle("panic", func(context.Context, *litequeue.Job) error { panic("boom") })
	step := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkRecount(t, q, name)
	}
	// appWrote is step for the app's own SQL on the jobs, which only a
	// server's triggers count: on a file, Health reports the difference
	// and RecountJobs mends it.
	appWrote := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !serverRun() {
			if h, err := q.Health(ctx); err != nil || h.OK() {
				t.Errorf("%s: Health = %+v, %v; want the counts' difference reported", name, h, err)
			}
			if changed, err := q.RecountJobs(ctx); err != nil || changed == 0 {
				t.Errorf("%s: RecountJobs = %d, %v; want the counts the app changed rewritten", name, changed, err)
			}
		}
		step(name, nil)
	}
	enqueue(t, q, "ok", nil)
	step("Enqueue", nil)
	_, err := q.EnqueueMany(ctx, "ok", make([]any, 20), litequeue.OnQueue("other"))
	step("EnqueueMany", err)
	for _, kind := range []string{"fail", "discard", "panic", "nobody"} {
		enqueue(t, q, kind, nil)
	}
	enqueue(t, q, "nobody", nil, litequeue.ExpireAfter(time.Minute))
	later := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	step("Enqueue of every kind", nil)
	for _, commit := range []bool{false, true} {
		tx, err := q.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.EnqueueTx(ctx, tx, "ok", nil, litequeue.OnQueue("tx")); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		step("EnqueueTx, committed "+map[bool]string{false: "no", true: "yes"}[commit], err)
	}
	_, err = q.RunDue(ctx) // completes, retries, discards, panics
	step("RunDue", err)
	clk.Add(2 * time.Minute) // the retries are due, the expiry has come
	_, err = q.RunDue(ctx)
	step("RunDue of the retries, expiry", err)
	step("RunNow", q.RunNow(ctx, later.ID))
	_, err = q.RunDue(ctx)
	step("RunDue of the job run now", err)
	dead, err := q.List(ctx, litequeue.Filter{State: litequeue.Dead})
	if err != nil || len(dead) < 2 {
		t.Fatalf("dead jobs: %d, %v; want the failed and the panicked", len(dead), err)
	}
	step("Replay", q.Replay(ctx, dead[0].ID))
	pending := enqueue(t, q, "nobody", nil)
	step("Cancel", q.Cancel(ctx, pending.ID))
	step("Delete", q.Delete(ctx, pending.ID))
	_, err = q.DB().Exec(q.DB().Rebind(`UPDATE litequeue_jobs SET state = 'running', lease_until = 1, token = token + 1, attempt = 1
		WHERE kind = 'nobody' AND state = 'pending'`))
	appWrote("the app's UPDATE: a worker that died holding a lease", err)
	_, err = q.RunDue(ctx)
	step("RunDue rescues the lease", err)
	_, err = q.PurgeDead(ctx, 0)
	step("PurgeDead", err)
	clk.Add(2 * time.Hour)
	_, err = q.RunDue(ctx)
	step("RunDue enforces retention", err)
	to, _ := openQueue(t, litequeue.Options{Clock: clk})
	enqueue(t, q, "ok", nil, litequeue.OnQueue("copied"))
	if _, err := litequeue.Copy(ctx, q, to); err != nil {
		t.Fatal(err)
	}
	checkRecount(t, to, "Copy")
	_, err = q.DB().Exec(`DELETE FROM litequeue_jobs`)
	appWrote("the app's DELETE of every job", err)
	s, err := q.Stats(ctx)
	if err != nil || len(s.Queues) != 0 {
		t.Errorf("Stats of no job = %+v, %v; want no queue", s.Queues, err)
	}
}
