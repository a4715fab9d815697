package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// TestQueue_Replay replays a job that used all its tries: it runs again and
// completes, and its history keeps the failed runs, the replay and the
// completion, in that order.
func TestQueue_Replay(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{
		Clock:   clk,
		Retry:   litequeue.Policy{Base: time.Second, MaxTries: 2},
		OnEvent: ev.record,
	})
	var fail atomic.Bool
	fail.Store(true)
	q.Handle("flaky", func(ctx context.Context, job *litequeue.Job) error {
		if fail.Load() {
			return errors.New("boom")
		}
		return nil
	})
	ctx := t.Context()
	job := enqueue(t, q, "flaky", nil)
	runDue(t, q)
	clk.Add(time.Second)
	runDue(t, q)
	if got := get(t, q, job.ID); got.State != litequeue.Dead {
		t.Fatalf("state after 2 failed tries = %s, want dead", got.State)
	}

	clk.Add(time.Minute)
	replayedAt := clk.Now()
	fail.Store(false)
	if err := q.Replay(ctx, job.ID); err != nil {
		t.Fatalf("Replay: %v", err)
	}
	got := get(t, q, job.ID)
	want := *job
	want.State, want.RunAt, want.LastError = litequeue.Pending, replayedAt, "boom"
	if diff := cmp.Diff(&want, got, cmpopts.IgnoreUnexported(litequeue.Job{})); diff != "" {
		t.Fatalf("job after Replay (-want +got):\n%s", diff)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue after Replay ran %d jobs, want 1", n)
	}
	got = get(t, q, job.ID)
	if got.State != litequeue.Completed || got.Attempt != 1 || got.LastError != "" || !got.FinishedAt.Equal(replayedAt) {
		t.Fatalf("job after its replayed run = %+v, want completed at attempt 1", got)
	}

	worker := workerName(t, q, job.ID)
	wantHist := []litequeue.Attempt{
		{Attempt: 1, StartedAt: epoch, FinishedAt: epoch, Outcome: litequeue.OutcomeFailed,
			Error: "boom", ErrorClass: "*errors.errorString", Delay: time.Second, Worker: worker},
		{Attempt: 2, StartedAt: epoch.Add(time.Second), FinishedAt: epoch.Add(time.Second), Outcome: litequeue.OutcomeFailed,
			Error: "boom", ErrorClass: "*errors.errorString", Worker: worker},
		{Attempt: 0, StartedAt: replayedAt, FinishedAt: replayedAt, Outcome: litequeue.OutcomeReplayed, Worker: worker},
		{Attempt: 1, StartedAt: replayedAt, FinishedAt: replayedAt, Outcome: litequeue.OutcomeCompleted, Worker: worker},
	}
	if diff := cmp.Diff(wantHist, history(t, q, job.ID)); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	wantTypes := []string{"job.enqueued", "job.started", "job.retry", "job.started", "job.dead",
		"job.replayed", "job.started", "job.completed"}
	if diff := cmp.Diff(wantTypes, ev.types()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	ev.mu.Lock()
	replayed := ev.list[5]
	ev.mu.Unlock()
	if replayed.Job.State != litequeue.Pending || replayed.Job.Attempt != 0 || !replayed.At.Equal(replayedAt) {
		t.Fatalf("job.replayed event = %+v, want the pending job at %v", replayed, replayedAt)
	}
}

func TestQueue_ReplayErrors(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()

	t.Run("missing", func(t *testing.T) {
		err := q.Replay(ctx, 999)
		if !errors.Is(err, litequeue.ErrNotFound) {
			t.Fatalf("Replay(999) = %v, want ErrNotFound", err)
		}
		if got, want := err.Error(), "litequeue: replay job 999: litequeue: job not found"; got != want {
			t.Fatalf("error = %q, want %q", got, want)
		}
	})
	t.Run("pending", func(t *testing.T) {
		job := enqueue(t, q, "later", nil)
		err := q.Replay(ctx, job.ID)
		if want := "litequeue: replay job " + itoa(job.ID) + ": it is pending"; err == nil || err.Error() != want {
			t.Fatalf("Replay of a pending job = %v, want %q", err, want)
		}
	})
	t.Run("filter state", func(t *testing.T) {
		n, err := q.ReplayDead(ctx, litequeue.Filter{State: litequeue.Completed})
		if err == nil || !strings.Contains(err.Error(), "completed") || n != 0 {
			t.Fatalf("ReplayDead(State: completed) = %d, %v; want an error naming the state", n, err)
		}
	})
}

// TestQueue_ReplayUniqueKey checks that a replay never makes a second live
// job with one UniqueKey: Replay refuses, naming the key and the live job,
// and ReplayDead skips.
func TestQueue_ReplayUniqueKey(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("doomed", doomed)
	ctx := t.Context()
	dead := enqueue(t, q, "doomed", nil, litequeue.UniqueKey("k"))
	runDue(t, q)
	live := enqueue(t, q, "doomed", nil, litequeue.UniqueKey("k"), litequeue.Delay(time.Hour))
	if live.Duplicate {
		t.Fatalf("Enqueue after the key's job died returned a duplicate")
	}

	err := q.Replay(ctx, dead.ID)
	want := "litequeue: replay job " + itoa(dead.ID) + `: unique key "k" is held by live job ` + itoa(live.ID)
	if err == nil || err.Error() != want {
		t.Fatalf("Replay = %v, want %q", err, want)
	}
	if n, err := q.ReplayDead(ctx, litequeue.Filter{}); n != 0 || err != nil {
		t.Fatalf("ReplayDead = %d, %v; want 0, nil (skipped)", n, err)
	}
	if got := get(t, q, dead.ID); got.State != litequeue.Dead {
		t.Fatalf("state after refused replays = %s, want dead", got.State)
	}
	if h := history(t, q, dead.ID); len(h) != 1 {
		t.Fatalf("refused replays left %d history rows, want 1", len(h))
	}

	if err := q.Cancel(ctx, live.ID); err != nil {
		t.Fatal(err)
	}
	if err := q.Replay(ctx, dead.ID); err != nil {
		t.Fatalf("Replay once the key is free: %v", err)
	}
	if got := get(t, q, dead.ID); got.State != litequeue.Pending {
		t.Fatalf("state after Replay = %s, want pending", got.State)
	}
}

// TestQueue_ReplayDeadFilter replays by queue, kind and limit, and skips the
// second of two dead jobs with one key.
func TestQueue_ReplayDeadFilter(t *testing.T) {
	t.Parallel()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record})
	q.Handle("a", doomed)
	q.Handle("b", doomed)
	ctx := t.Context()
	a1 := enqueue(t, q, "a", nil, litequeue.OnQueue("q1"))
	a2 := enqueue(t, q, "a", nil, litequeue.OnQueue("q2"))
	b1 := enqueue(t, q, "b", nil, litequeue.OnQueue("q1"))
	b2 := enqueue(t, q, "b", nil, litequeue.OnQueue("q1"))
	k1 := enqueue(t, q, "b", nil, litequeue.OnQueue("q3"), litequeue.UniqueKey("k"))
	runDue(t, q)
	k2 := enqueue(t, q, "b", nil, litequeue.OnQueue("q3"), litequeue.UniqueKey("k"))
	runDue(t, q)

	replay := func(f litequeue.Filter, want int) {
		t.Helper()
		n, err := q.ReplayDead(ctx, f)
		if err != nil || n != want {
			t.Fatalf("ReplayDead(%+v) = %d, %v; want %d", f, n, err, want)
		}
	}
	replay(litequeue.Filter{Queue: "q1", Kind: "b", Limit: 1}, 1)
	replay(litequeue.Filter{Kind: "a", State: litequeue.Dead}, 2)
	replay(litequeue.Filter{Queue: "q3"}, 1)
	var pending []int64
	for _, j := range []*litequeue.Job{a1, a2, b1, b2, k1, k2} {
		if get(t, q, j.ID).State == litequeue.Pending {
			pending = append(pending, j.ID)
		}
	}
	if diff := cmp.Diff([]int64{a1.ID, a2.ID, b1.ID, k1.ID}, pending); diff != "" {
		t.Fatalf("replayed jobs (-want +got):\n%s", diff)
	}
	if got := ev.count("job.replayed"); got != 4 {
		t.Fatalf("%d job.replayed events, want 4", got)
	}
}

// TestQueue_ReplayDeadWhileWorking replays 5,000 dead jobs in one call while
// a Work loop on the same Queue runs them: every one completes once, with
// its failed run, its replay and its completion in its history.
func TestQueue_ReplayDeadWhileWorking(t *testing.T) {
	t.Parallel()
	jobs := 5000
	if race {
		jobs = 700 // still two ReplayDead batches, with Work busy throughout
	}
	var ev events
	// synchronous=normal: the test is about the replay, not about fsync.
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record, Synchronous: "normal"})
	var fail atomic.Bool
	fail.Store(true)
	q.Handle("bulk", func(ctx context.Context, job *litequeue.Job) error {
		if fail.Load() {
			return litequeue.Permanent(errors.New("down"))
		}
		return nil
	})
	ctx := t.Context()
	if _, err := q.EnqueueMany(ctx, "bulk", make([]any, jobs)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if n := runDue(t, q); n != jobs {
		t.Fatalf("RunDue ran %d jobs, want %d", n, jobs)
	}
	if testing.Verbose() {
		t.Logf("RunDue killed %d jobs in %v", jobs, time.Since(start))
	}

	wctx, stop := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() { worked <- q.Work(wctx, litequeue.WorkerOptions{}) }()
	fail.Store(false)
	start = time.Now()
	n, err := q.ReplayDead(ctx, litequeue.Filter{State: litequeue.Dead})
	took := time.Since(start)
	if err != nil || n != jobs {
		t.Fatalf("ReplayDead = %d, %v; want %d", n, err, jobs)
	}
	if testing.Verbose() {
		t.Logf("ReplayDead replayed %d jobs in %v, with Work running", jobs, took)
	}
	waitWithin(t, 2*time.Minute, "every replayed job to complete", func() bool { return ev.count("job.completed") == jobs })
	stop()
	if err := <-worked; err != nil {
		t.Fatalf("Work: %v", err)
	}

	done, err := q.List(ctx, litequeue.Filter{State: litequeue.Completed})
	if err != nil || len(done) != jobs {
		t.Fatalf("List(completed) = %d jobs, %v; want %d", len(done), err, jobs)
	}
	want := []litequeue.Outcome{litequeue.OutcomeFailed, litequeue.OutcomeReplayed, litequeue.OutcomeCompleted}
	for _, j := range done {
		if diff := cmp.Diff(want, outcomes(history(t, q, j.ID))); diff != "" {
			t.Fatalf("job %d history (-want +got):\n%s", j.ID, diff)
		}
	}
	if got := ev.count("job.replayed"); got != jobs {
		t.Fatalf("%d job.replayed events, want %d", got, jobs)
	}
}

// TestQueue_PurgeDead deletes dead jobs from the moment they have been dead
// for the given age, and not a millisecond before, with their history.
func TestQueue_PurgeDead(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("doomed", doomed)
	ctx := t.Context()
	dead := enqueue(t, q, "doomed", nil)
	other := enqueue(t, q, "other", nil) // pending: never purged
	runDue(t, q)

	check := func(wantCount, wantPurged int) {
		t.Helper()
		n, err := q.CountDead(ctx, time.Hour)
		if err != nil || n != wantCount {
			t.Fatalf("at %v: CountDead(1h) = %d, %v; want %d", clk.Now().Sub(epoch), n, err, wantCount)
		}
		n, err = q.PurgeDead(ctx, time.Hour)
		if err != nil || n != wantPurged {
			t.Fatalf("at %v: PurgeDead(1h) = %d, %v; want %d", clk.Now().Sub(epoch), n, err, wantPurged)
		}
	}
	clk.Set(epoch.Add(time.Hour - time.Millisecond))
	check(0, 0)
	get(t, q, dead.ID)
	clk.Set(epoch.Add(time.Hour))
	check(1, 1)
	if _, err := q.Get(ctx, dead.ID); !errors.Is(err, litequeue.ErrNotFound) {
		t.Fatalf("Get of a purged job = %v, want ErrNotFound", err)
	}
	if n := historyRows(t, q, dead.ID); n != 0 {
		t.Fatalf("purged job left %d history rows", n)
	}
	get(t, q, other.ID)
	check(0, 0)

	if _, err := q.PurgeDead(ctx, -time.Second); err == nil || !strings.Contains(err.Error(), "-1s") {
		t.Fatalf("PurgeDead(-1s) = %v, want an error naming the age", err)
	}
}
