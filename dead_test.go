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

// TestQueue_ReplayTallied replays what a person confirmed: the dead jobs
// TallyReplay counted, none that died since with a higher ID, and nothing
// at all, with a *TallyError that says how many match now, when the jobs
// up to the tally's highest ID are no longer as many.
func TestQueue_ReplayTallied(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
	q.Handle("doomed", doomed)
	ctx := t.Context()
	f := litequeue.Filter{Kind: "doomed"}
	later := enqueue(t, q, "doomed", nil, litequeue.Delay(time.Hour))
	a := enqueue(t, q, "doomed", nil)
	b := enqueue(t, q, "doomed", nil)
	enqueue(t, q, "other", nil) // not of the filter
	runDue(t, q)
	tally, err := q.TallyReplay(ctx, f)
	if diff := cmp.Diff(litequeue.Tally{Jobs: 2, MaxID: b.ID}, tally); err != nil || diff != "" {
		t.Fatalf("TallyReplay: %v, (-want +got):\n%s", err, diff)
	}

	// Between the count and the act, a job counted before dies: more
	// jobs up to the highest ID counted. Nothing is replayed.
	clk.Add(time.Hour)
	runDue(t, q)
	n, err := q.ReplayTallied(ctx, f, tally)
	var te *litequeue.TallyError
	if n != 0 || !errors.As(err, &te) || te.Want != 2 || te.Got != 3 {
		t.Fatalf("ReplayTallied after a death inside the tally = %d, %v; want 0 and a TallyError of 2 wanted, 3 got", n, err)
	}
	if !strings.Contains(err.Error(), "3") || !strings.Contains(err.Error(), "2") {
		t.Errorf("the TallyError %q does not say both counts", err)
	}
	for _, j := range []*litequeue.Job{later, a, b} {
		if got := get(t, q, j.ID).State; got != litequeue.Dead {
			t.Fatalf("job %d is %s after a refused ReplayTallied, want dead", j.ID, got)
		}
	}

	// Counted again, then a job dies above the highest ID counted: the
	// three counted are replayed, and only they.
	tally, err = q.TallyReplay(ctx, f)
	if diff := cmp.Diff(litequeue.Tally{Jobs: 3, MaxID: b.ID}, tally); err != nil || diff != "" {
		t.Fatalf("TallyReplay again: %v, (-want +got):\n%s", err, diff)
	}
	c := enqueue(t, q, "doomed", nil)
	runDue(t, q)
	if n, err := q.ReplayTallied(ctx, f, tally); n != 3 || err != nil {
		t.Fatalf("ReplayTallied = %d, %v; want the 3 counted", n, err)
	}
	if got := get(t, q, c.ID).State; got != litequeue.Dead {
		t.Errorf("job %d, dead after the count, is %s after ReplayTallied, want dead", c.ID, got)
	}
	if got := ev.count("job.replayed"); got != 3 {
		t.Errorf("%d job.replayed events, want 3", got)
	}

	// Fewer than counted (another replayed one meanwhile): nothing either.
	runDue(t, q) // the three die again
	tally, _ = q.TallyReplay(ctx, f)
	if err := q.Replay(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := q.ReplayTallied(ctx, f, tally); n != 0 || !errors.As(err, &te) || te.Want != 4 || te.Got != 3 {
		t.Fatalf("ReplayTallied after another's replay = %d, %v; want 0 and a TallyError of 4 wanted, 3 got", n, err)
	}

	for _, bad := range []litequeue.Tally{{Jobs: -1, MaxID: 1}, {Jobs: 1, MaxID: -1}} {
		if _, err := q.ReplayTallied(ctx, f, bad); err == nil || !strings.Contains(err.Error(), "-1") {
			t.Errorf("ReplayTallied(%+v) = %v, want an error naming the value", bad, err)
		}
	}
	if _, err := q.TallyReplay(ctx, litequeue.Filter{State: litequeue.Pending}); err == nil || !strings.Contains(err.Error(), "pending") {
		t.Errorf("TallyReplay of pending jobs = %v, want an error naming the state", err)
	}
}

// TestQueue_PurgeTallied purges what a person confirmed: the jobs dead for
// the age that TallyPurge counted, none that died since with a higher ID,
// and nothing when the jobs up to its highest ID that are dead for the age
// are no longer as many, as when time makes one more old enough.
func TestQueue_PurgeTallied(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("doomed", doomed)
	ctx := t.Context()
	x := enqueue(t, q, "doomed", nil, litequeue.Delay(30*time.Minute)) // dies at 30m
	a := enqueue(t, q, "doomed", nil)                                  // dies at 0
	runDue(t, q)
	clk.Add(30 * time.Minute)
	runDue(t, q)
	clk.Add(30 * time.Minute) // 1h: a is dead for 1h, x for 30m
	tally, err := q.TallyPurge(ctx, time.Hour)
	if diff := cmp.Diff(litequeue.Tally{Jobs: 1, MaxID: a.ID}, tally); err != nil || diff != "" {
		t.Fatalf("TallyPurge(1h): %v, (-want +got):\n%s", err, diff)
	}
	clk.Add(30 * time.Minute) // x is dead for 1h too now
	n, err := q.PurgeTallied(ctx, time.Hour, tally)
	var te *litequeue.TallyError
	if n != 0 || !errors.As(err, &te) || te.Want != 1 || te.Got != 2 {
		t.Fatalf("PurgeTallied once x is old enough = %d, %v; want 0 and a TallyError of 1 wanted, 2 got", n, err)
	}
	get(t, q, a.ID)
	get(t, q, x.ID)

	tally, err = q.TallyPurge(ctx, 0)
	if diff := cmp.Diff(litequeue.Tally{Jobs: 2, MaxID: a.ID}, tally); err != nil || diff != "" {
		t.Fatalf("TallyPurge(0): %v, (-want +got):\n%s", err, diff)
	}
	c := enqueue(t, q, "doomed", nil)
	runDue(t, q) // dies after the count, with a higher ID
	if n, err := q.PurgeTallied(ctx, 0, tally); n != 2 || err != nil {
		t.Fatalf("PurgeTallied = %d, %v; want the 2 counted", n, err)
	}
	for _, j := range []*litequeue.Job{a, x} {
		if _, err := q.Get(ctx, j.ID); !errors.Is(err, litequeue.ErrNotFound) || historyRows(t, q, j.ID) != 0 {
			t.Errorf("job %d: %v after the purge, want it gone with its history", j.ID, err)
		}
	}
	if got := get(t, q, c.ID).State; got != litequeue.Dead {
		t.Errorf("job %d, dead after the count, is %s after PurgeTallied, want dead", c.ID, got)
	}
	if n, err := q.CountDead(ctx, 0); n != 1 || err != nil {
		t.Errorf("CountDead after the purge = %d, %v; want 1", n, err)
	}
	if _, err := q.PurgeTallied(ctx, -time.Second, tally); err == nil || !strings.Contains(err.Error(), "-1s") {
		t.Errorf("PurgeTallied(-1s) = %v, want an error naming the age", err)
	}
}
