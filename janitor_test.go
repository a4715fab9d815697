package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_Retention steps the clock to each TTL's end with the defaults
// (DeadTTL 14 days, KeepFinished 24h) and a key's TTL: RunDue purges each
// thing, with its history, at its TTL's end and not a millisecond before.
func TestQueue_Retention(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("ok", func(ctx context.Context, job *litequeue.Job) error { return nil })
	q.Handle("doomed", doomed)
	q.Handle("spam", func(ctx context.Context, job *litequeue.Job) error { return litequeue.ErrDiscard })
	ctx := t.Context()
	completed := enqueue(t, q, "ok", nil)
	dead := enqueue(t, q, "doomed", nil)
	discarded := enqueue(t, q, "spam", nil)
	cancelled := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	scheduled := enqueue(t, q, "later", nil, litequeue.Delay(30*24*time.Hour))
	if err := q.Cancel(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	mark(t, q, "key", time.Hour)
	runDue(t, q) // everything finishes at epoch

	step := func(d time.Duration) {
		t.Helper()
		clk.Set(epoch.Add(d))
		runDue(t, q)
	}
	step(time.Hour - time.Millisecond)
	if !seen(t, q, "key") {
		t.Fatalf("key gone before its TTL")
	}
	step(time.Hour)
	clk.Set(epoch.Add(time.Hour - time.Millisecond)) // back: a key still stored would be seen
	if seen(t, q, "key") {
		t.Fatalf("key not purged at the end of its TTL")
	}

	finished := []*litequeue.Job{completed, discarded, cancelled}
	step(litequeue.DefaultKeepFinished - time.Millisecond)
	for _, j := range finished {
		if !exists(t, q, j.ID) {
			t.Fatalf("%s job purged a millisecond before KeepFinished", j.Kind)
		}
	}
	step(litequeue.DefaultKeepFinished)
	for _, j := range finished {
		if exists(t, q, j.ID) || historyRows(t, q, j.ID) != 0 {
			t.Fatalf("job %d (%s) or its history kept after KeepFinished", j.ID, j.Kind)
		}
	}

	step(litequeue.DefaultDeadTTL - time.Millisecond)
	if !exists(t, q, dead.ID) || historyRows(t, q, dead.ID) != 1 {
		t.Fatalf("dead job or its history purged a millisecond before DeadTTL")
	}
	step(litequeue.DefaultDeadTTL)
	if exists(t, q, dead.ID) || historyRows(t, q, dead.ID) != 0 {
		t.Fatalf("dead job or its history kept after DeadTTL")
	}
	if !exists(t, q, scheduled.ID) {
		t.Fatalf("a pending job was purged")
	}
}

// TestQueue_RetentionBatches purges more finished jobs, and history rows,
// than one retention transaction takes.
func TestQueue_RetentionBatches(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Synchronous: "normal", KeepFinished: time.Hour})
	q.Handle("twice", func(ctx context.Context, job *litequeue.Job) error {
		if job.Attempt == 1 {
			return litequeue.RetryAfter(0, errors.New("again")) // due at once
		}
		return nil
	})
	ctx := t.Context()
	const jobs = 700 // 3 rows each: 2,100 rows
	if _, err := q.EnqueueMany(ctx, "twice", make([]any, jobs)); err != nil {
		t.Fatal(err)
	}
	if n := runDue(t, q); n != 2*jobs {
		t.Fatalf("RunDue ran %d jobs, want %d", n, 2*jobs)
	}
	clk.Add(time.Hour)
	runDue(t, q)
	all, err := q.List(ctx, litequeue.Filter{})
	if err != nil || len(all) != 0 {
		t.Fatalf("after KeepFinished: %d jobs left, %v", len(all), err)
	}
	var rows int
	if err := q.DB().Get(&rows, `SELECT COUNT(*) FROM litequeue_attempts`); err != nil || rows != 0 {
		t.Fatalf("after KeepFinished: %d history rows left, %v", rows, err)
	}
}

// TestQueue_WorkRetention checks that Work's loop runs the janitor as the
// injected clock moves on.
func TestQueue_WorkRetention(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
	q.Handle("ok", func(ctx context.Context, job *litequeue.Job) error { return nil })
	ctx, stop := context.WithCancel(t.Context())
	worked := make(chan error, 1)
	go func() { worked <- q.Work(ctx, litequeue.WorkerOptions{}) }()
	job := enqueue(t, q, "ok", nil)
	waitFor(t, "the job to complete", func() bool { return ev.count("job.completed") == 1 })
	clk.Add(litequeue.DefaultKeepFinished)
	waitFor(t, "Work to purge the completed job", func() bool {
		if !exists(t, q, job.ID) {
			return true
		}
		clk.Add(time.Second) // wake the idle loop's timer
		return false
	})
	stop()
	if err := <-worked; err != nil {
		t.Fatalf("Work: %v", err)
	}
}
