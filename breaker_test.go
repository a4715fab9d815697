package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// breakerRetry retries every 5s, long enough to die nowhere in these tests.
var breakerRetry = litequeue.Policy{Backoff: litequeue.Constant, Base: 5 * time.Second, Ceiling: time.Minute, MaxTries: 50, Jitter: litequeue.NoJitter}

// dieAtOnce sends a failed job to dead at once: it does not run again.
var dieAtOnce = litequeue.Policy{MaxTries: 1}

// dueAt is nextDue for a queue that has work: it fails the test when
// nothing is due.
func dueAt(t *testing.T, q *litequeue.Queue) time.Time {
	t.Helper()
	at, ok := nextDue(t, q)
	if !ok {
		t.Fatal("NextDue: nothing due, want a time")
	}
	return at
}

// attempts returns the Attempt of each job, by ID.
func attempts(tb testing.TB, q *litequeue.Queue, jobs []*litequeue.Job) map[int64]int {
	tb.Helper()
	out := make(map[int64]int, len(jobs))
	for _, j := range jobs {
		out[j.ID] = get(tb, q, j.ID).Attempt
	}
	return out
}

// receive returns the next value on ch, failing the test after a
// real-time deadline.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// dependency is a handler whose runs fail until the dependency is up; it
// records the job of each run.
type dependency struct {
	up   atomic.Bool
	mu   sync.Mutex
	runs []int64
}

func (d *dependency) handle(ctx context.Context, job *litequeue.Job) error {
	d.mu.Lock()
	d.runs = append(d.runs, job.ID)
	d.mu.Unlock()
	if !d.up.Load() {
		return errDown
	}
	return nil
}

// last returns the job of the last run.
func (d *dependency) last() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.runs[len(d.runs)-1]
}

// TestBreaker_Timeline plays an outage: a kind whose handler fails until
// its dependency comes back. The breaker opens at the 5th failure; while
// it is open the waiting jobs are not claimed and use no tries; its probe
// at the cool-down's end fails and opens it for twice as long; the next
// probe succeeds, closes it, and the rest drain.
func TestBreaker_Timeline(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	var q *litequeue.Queue
	committed := make(map[string]bool) // at each breaker event, whether Stats already showed it
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime}))
	q, _ = openQueue(t, litequeue.Options{Clock: clk, Retry: breakerRetry, Logger: logger, OnEvent: func(e litequeue.Event) {
		ev.record(e)
		if strings.HasPrefix(e.Type, "job.breaker_") {
			_, open := breakers(t, q)["k"]
			committed[e.Type] = open == (e.Type == "job.breaker_opened")
		}
	}})
	dep := &dependency{}
	q.Handle("k", dep.handle, litequeue.WithBreaker(litequeue.Breaker{
		Failures: 5, Ratio: 0.5, Window: time.Minute, Cooldown: 30 * time.Second,
	}))
	var jobs []*litequeue.Job
	for i := range 8 {
		jobs = append(jobs, enqueue(t, q, "k", i))
	}

	if n := runDue(t, q); n != 5 {
		t.Fatalf("RunDue ran %d jobs while the dependency is down, want 5: the breaker opens at the 5th failure", n)
	}
	opened := clk.Now()
	want := map[string]litequeue.BreakerStats{"k": {State: "open", OpenedAt: opened, Until: opened.Add(30 * time.Second), Trips: 1}}
	if diff := cmp.Diff(want, breakers(t, q)); diff != "" {
		t.Fatalf("Stats.Breakers after the 5th failure (-want +got):\n%s", diff)
	}
	if got, want := dueAt(t, q), opened.Add(30*time.Second); !got.Equal(want) {
		t.Fatalf("NextDue = %v while open, want the cool-down's end %v", got, want)
	}
	atOpen := attempts(t, q, jobs)
	runAts := make(map[int64]time.Time)
	for _, j := range jobs {
		runAts[j.ID] = get(t, q, j.ID).RunAt
	}

	clk.Add(10 * time.Second) // the failed jobs' retries are due
	if n := runDue(t, q); n != 0 {
		t.Fatalf("RunDue ran %d jobs while the breaker is open, want 0", n)
	}
	for _, j := range jobs {
		if got := get(t, q, j.ID).RunAt; !got.Equal(runAts[j.ID]) {
			t.Errorf("job %d: RunAt %v while open, want %v unchanged", j.ID, got, runAts[j.ID])
		}
	}

	clk.Set(dueAt(t, q))
	probe1At := clk.Now()
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue ran %d jobs at the cool-down's end, want 1 probe", n)
	}
	probe1 := dep.last()
	reopened := clk.Now()
	want = map[string]litequeue.BreakerStats{"k": {State: "open", OpenedAt: opened, Until: reopened.Add(time.Minute), Trips: 2}}
	if diff := cmp.Diff(want, breakers(t, q)); diff != "" {
		t.Fatalf("Stats.Breakers after the failed probe (-want +got):\n%s", diff)
	}

	dep.up.Store(true)
	clk.Set(dueAt(t, q))
	probe2At := clk.Now()
	beforeClose := attempts(t, q, jobs)
	if n := runDue(t, q); n != 8 {
		t.Fatalf("RunDue ran %d jobs once the dependency is back, want 8: the probe, then the rest", n)
	}
	probe2 := dep.runs[5+1]
	closed := clk.Now()
	if b := breakers(t, q); len(b) != 0 {
		t.Fatalf("Stats.Breakers after the probe succeeded = %+v, want none", b)
	}
	for _, j := range jobs {
		if got := get(t, q, j.ID).State; got != litequeue.Completed {
			t.Errorf("job %d: %s, want completed", j.ID, got)
		}
	}

	// Tries used while open: by jobs other than the probes, between the
	// 5th failure and the second probe.
	used := 0
	for _, j := range jobs {
		d := beforeClose[j.ID] - atOpen[j.ID]
		if j.ID == probe1 {
			d--
		}
		used += d
	}
	if used != 0 {
		t.Errorf("waiting jobs used %d tries while the breaker was open, want 0", used)
	}
	if probe1At.Sub(opened) != 30*time.Second || probe2At.Sub(reopened) != time.Minute {
		t.Errorf("probes at +%v and +%v after opening, want +30s and +1m", probe1At.Sub(opened), probe2At.Sub(reopened))
	}

	var got []string
	for _, e := range ev.list {
		if strings.HasPrefix(e.Type, "job.breaker_") {
			got = append(got, fmt.Sprintf("%s job=%d err=%q delay=%v at=+%v", e.Type, e.Job.ID, e.Err, e.Delay, e.At.Sub(epoch)))
		}
	}
	wantEvents := []string{
		fmt.Sprintf("job.breaker_opened job=%d err=%q delay=30s at=+0s", dep.runs[4], errDown.Error()),
		fmt.Sprintf("job.breaker_opened job=%d err=%q delay=1m0s at=+30s", probe1, errDown.Error()),
		fmt.Sprintf("job.breaker_closed job=%d err=\"\" delay=0s at=+1m30s", probe2),
	}
	if diff := cmp.Diff(wantEvents, got); diff != "" {
		t.Errorf("breaker events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"job.breaker_opened": true, "job.breaker_closed": true}, committed); diff != "" {
		t.Errorf("committed when fired (-want +got):\n%s", diff)
	}
	warned := 0
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "circuit breaker opened") && strings.Contains(line, "kind=k") {
			warned++
		}
	}
	if warned != 2 {
		t.Errorf("%d warnings of an opened breaker, want 2:\n%s", warned, logs.String())
	}
	t.Logf("timeline: opened at +%v (5th failure), probe at +%v (failed), re-opened at +%v for 1m, probe at +%v (completed), closed at +%v; tries used by waiting jobs while open: %d",
		opened.Sub(epoch), probe1At.Sub(epoch), reopened.Sub(epoch), probe2At.Sub(epoch), closed.Sub(epoch), used)
}

// dropTime leaves the wall-clock time out of a log line.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 {
		return slog.Attr{}
	}
	return a
}

// TestBreaker_Counting checks which runs open a breaker: failed ones,
// Permanent ones and panics, in the window, at least Ratio of the runs
// that count; discarded, cancelled and snoozed runs count neither way.
func TestBreaker_Counting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		breaker litequeue.Breaker
		first   []string      // runs at epoch
		wait    time.Duration // then
		then    []string      // runs after wait
		open    bool          // after first, whether the breaker must be open: never
		want    bool          // after then
	}{
		{name: "threshold", breaker: litequeue.Breaker{Failures: 3}, first: []string{"fail", "fail"}, then: []string{"fail"}, want: true},
		{name: "below Failures", breaker: litequeue.Breaker{Failures: 4}, first: []string{"fail", "fail"}, then: []string{"fail"}},
		{name: "ratio below", breaker: litequeue.Breaker{Failures: 3, Ratio: 0.5}, first: []string{"ok", "ok", "ok", "ok", "fail", "fail"}, then: []string{"fail"}},
		{name: "ratio reached", breaker: litequeue.Breaker{Failures: 3, Ratio: 0.5}, first: []string{"ok", "ok", "ok", "ok", "fail", "fail", "fail"}, then: []string{"fail"}, want: true},
		{name: "inside window", breaker: litequeue.Breaker{Failures: 3, Window: time.Minute}, first: []string{"fail", "fail"}, wait: time.Minute - time.Millisecond, then: []string{"fail"}, want: true},
		{name: "outside window", breaker: litequeue.Breaker{Failures: 3, Window: time.Minute}, first: []string{"fail", "fail"}, wait: time.Minute, then: []string{"fail"}},
		{name: "permanent and panic count", breaker: litequeue.Breaker{Failures: 3, Ratio: 1}, first: []string{"permanent", "panic"}, then: []string{"fail"}, want: true},
		{name: "discard cancel snooze count neither way", breaker: litequeue.Breaker{Failures: 3, Ratio: 1}, first: []string{"fail", "discard", "cancel", "snooze", "fail"}, then: []string{"fail"}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce})
			q.Handle("k", outcomeHandler, litequeue.WithBreaker(tc.breaker))
			for _, what := range tc.first {
				enqueue(t, q, "k", what)
			}
			if n := runDue(t, q); n != len(tc.first) {
				t.Fatalf("first RunDue ran %d, want %d", n, len(tc.first))
			}
			if b := breakers(t, q); len(b) != 0 {
				t.Fatalf("breaker %+v after %v, want closed", b, tc.first)
			}
			clk.Add(tc.wait)
			for _, what := range tc.then {
				enqueue(t, q, "k", what)
			}
			runDue(t, q)
			if _, got := breakers(t, q)["k"]; got != tc.want {
				t.Fatalf("breaker open = %v after %v, then %v at +%v; want %v", got, tc.first, tc.then, tc.wait, tc.want)
			}
		})
	}
}

// trip opens the breaker of kind "k" on q with failures failed runs at
// the clock's time, and returns when it opened.
func trip(tb testing.TB, q *litequeue.Queue, clk *clock.Mock, failures int) time.Time {
	tb.Helper()
	for range failures {
		enqueue(tb, q, "k", "fail")
	}
	runDue(tb, q)
	if _, ok := breakers(tb, q)["k"]; !ok {
		tb.Fatalf("breaker closed after %d failures, want open", failures)
	}
	return clk.Now()
}

// TestBreaker_CooldownCap checks that each failed probe doubles the
// cool-down, up to MaxCooldown.
func TestBreaker_CooldownCap(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: breakerRetry})
	q.Handle("k", outcomeHandler, litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: 30 * time.Second, MaxCooldown: 100 * time.Second}))
	opened := trip(t, q, clk, 1)
	var got []time.Duration
	at := opened
	for range 5 {
		next := dueAt(t, q)
		got = append(got, next.Sub(at))
		clk.Set(next)
		at = next
		if n := runDue(t, q); n != 1 {
			t.Fatalf("RunDue at the cool-down's end ran %d, want 1 probe", n)
		}
	}
	want := []time.Duration{30 * time.Second, time.Minute, 100 * time.Second, 100 * time.Second, 100 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("cool-downs (-want +got):\n%s", diff)
	}
	if got := breakers(t, q)["k"].Trips; got != 6 {
		t.Fatalf("Trips = %d after 5 failed probes, want 6", got)
	}
}

// TestBreaker_ProbeNeutral checks that a probe that is cancelled or
// discarded leaves the breaker open with its cool-down over: the next
// job is the next probe, at once, and its failure opens the breaker for
// twice as long, as a failed probe does.
func TestBreaker_ProbeNeutral(t *testing.T) {
	t.Parallel()
	for _, what := range []string{"cancel", "discard"} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			var ev events
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce, OnEvent: ev.record})
			q.Handle("k", outcomeHandler, litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: 30 * time.Second}))
			trip(t, q, clk, 1)
			neutral := enqueue(t, q, "k", what)
			next := enqueue(t, q, "k", "fail")
			clk.Add(30 * time.Second)
			if n := runDue(t, q); n != 2 {
				t.Fatalf("RunDue ran %d, want 2: the %s probe, then another", n, what)
			}
			if h := history(t, q, neutral.ID); len(h) != 1 || h[0].StartedAt.Before(clk.Now()) {
				t.Fatalf("history of the first probe %+v, want one run now", h)
			}
			if h := history(t, q, next.ID); len(h) != 1 || h[0].Outcome != litequeue.OutcomeFailed {
				t.Fatalf("history of the second probe %+v, want one failed run", h)
			}
			want := litequeue.BreakerStats{State: "open", OpenedAt: epoch, Until: clk.Now().Add(time.Minute), Trips: 2}
			if diff := cmp.Diff(want, breakers(t, q)["k"]); diff != "" {
				t.Fatalf("breaker after the second probe failed (-want +got):\n%s", diff)
			}
			if got := ev.count("job.breaker_opened"); got != 2 {
				t.Fatalf("job.breaker_opened fired %d times, want 2: the trip and the failed second probe", got)
			}
		})
	}
}

// TestBreaker_ProbeReleased shuts a Queue down while its probe runs: the
// probe is released without using a try, and the breaker, open with its
// cool-down over, lets the next claim take a probe.
func TestBreaker_ProbeReleased(t *testing.T) {
	t.Parallel()
	clk := newTimerClock()
	opts := litequeue.Options{Clock: clk, Retry: dieAtOnce}
	b := litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: 30 * time.Second})
	q1, path := openQueue(t, opts)
	started, cancelled := make(chan int64, 1), make(chan struct{})
	q1.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"fail"` {
			return errDown
		}
		started <- job.ID
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	}, b)
	trip(t, q1, clk.Mock, 1)
	waiting := enqueue(t, q1, "k", "wait")
	clk.Add(30 * time.Second)
	done := runDueAsync(q1)
	id := receive(t, started, "the probe to start")
	state := breakers(t, q1)["k"].State // checked once the run is shut down
	closed, from := make(chan struct{}), clk.mark()
	go func() { q1.Close(); close(closed) }()
	// The clock stops once the grace is over: stepped on, it would reach
	// the moment a run that has not yet returned is abandoned.
	runOut(t, clk, from, litequeue.DefaultShutdownGrace)
	waitClosed(t, "the shutdown to cancel the probe", cancelled)
	receive(t, closed, "Close to release the probe")
	if r := <-done; !errors.Is(r.err, litequeue.ErrClosed) {
		t.Fatalf("RunDue = %d, %v; want ErrClosed", r.n, r.err)
	}
	if id != waiting.ID || state != "half_open" {
		t.Fatalf("probe %d, breaker %s while it ran; want job %d, half_open", id, state, waiting.ID)
	}

	q2 := openAt(t, path, opts)
	q2.Handle("k", outcomeHandler, b)
	if got := get(t, q2, waiting.ID); got.State != litequeue.Pending || got.Attempt != 0 {
		t.Fatalf("released probe: %s, attempt %d; want pending, attempt 0", got.State, got.Attempt)
	}
	if got := breakers(t, q2)["k"]; got.State != "open" || got.Until.After(clk.Now()) {
		t.Fatalf("breaker %+v after its probe was released, want open with its cool-down over", got)
	}
	if n := runDue(t, q2); n != 1 {
		t.Fatalf("RunDue ran %d, want 1: the next probe", n)
	}
	if got := get(t, q2, waiting.ID).State; got != litequeue.Completed {
		t.Fatalf("next probe %s, want completed", got)
	}
	if b := breakers(t, q2); len(b) != 0 {
		t.Fatalf("breakers %+v, want closed", b)
	}
}

// TestBreaker_ProbeLost lets the lease of a probe expire: the rescue, by
// a Queue with no handler of the kind, counts it as a failed probe and
// opens the breaker again for twice as long; the lost run's late success
// changes nothing.
func TestBreaker_ProbeLost(t *testing.T) {
	t.Parallel()
	clk1, clk2 := newMock(), newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk1, Retry: dieAtOnce})
	var ev events
	q2 := openAt(t, path, litequeue.Options{Clock: clk2, Retry: dieAtOnce, OnEvent: ev.record})
	release := make(chan struct{})
	started := make(chan int64, 1)
	q1.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"fail"` {
			return errDown
		}
		started <- job.ID
		<-release
		return nil
	}, litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: 30 * time.Second}))
	trip(t, q1, clk1, 1)
	probe := enqueue(t, q1, "k", "wait")
	clk1.Add(30 * time.Second)
	done := runDueAsync(q1)
	var once sync.Once
	returned := func() { once.Do(func() { close(release); <-done }) }
	defer returned()
	receive(t, started, "the probe to start")

	// q1's clock stands still, so its lease is not renewed; q2's passes it.
	clk2.Set(clk1.Now().Add(litequeue.DefaultVisibilityTimeout))
	runDue(t, q2)
	rescued := clk2.Now()
	if h := history(t, q2, probe.ID); len(h) != 1 || h[0].Outcome != litequeue.OutcomeLeaseExpired {
		t.Fatalf("probe history %+v, want one lease_expired run", h)
	}
	want := litequeue.BreakerStats{State: "open", OpenedAt: epoch, Until: rescued.Add(time.Minute), Trips: 2}
	if diff := cmp.Diff(want, breakers(t, q2)["k"]); diff != "" {
		t.Fatalf("breaker after the lost probe (-want +got):\n%s", diff)
	}
	if got := ev.count("job.breaker_opened"); got != 1 {
		t.Fatalf("job.breaker_opened fired %d times on the rescuer, want 1", got)
	}
	returned()
	if diff := cmp.Diff(want, breakers(t, q2)["k"]); diff != "" {
		t.Fatalf("breaker after the lost run returned (-want +got):\n%s", diff)
	}
}

// TestBreaker_SharedByQueues opens a breaker from one Queue: the other
// Queue on the database stops claiming the kind, reports the cool-down's
// end as its next due time, and takes the probe then.
func TestBreaker_SharedByQueues(t *testing.T) {
	t.Parallel()
	clk := newMock()
	b := litequeue.WithBreaker(litequeue.Breaker{Failures: 2, Cooldown: 30 * time.Second})
	q1, path := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce})
	q2 := openAt(t, path, litequeue.Options{Clock: clk, Retry: dieAtOnce})
	q1.Handle("k", outcomeHandler, b)
	q2.Handle("k", outcomeHandler, b)
	opened := trip(t, q1, clk, 2)
	for range 3 {
		enqueue(t, q2, "k", "ok")
	}
	if n := runDue(t, q2); n != 0 {
		t.Fatalf("the other Queue ran %d jobs while the breaker is open, want 0", n)
	}
	if got, want := dueAt(t, q2), opened.Add(30*time.Second); !got.Equal(want) {
		t.Fatalf("the other Queue's NextDue = %v, want the cool-down's end %v", got, want)
	}
	clk.Set(opened.Add(30 * time.Second))
	if n := runDue(t, q2); n != 3 {
		t.Fatalf("the other Queue ran %d at the cool-down's end, want 3: the probe, then the rest", n)
	}
	if b := breakers(t, q1); len(b) != 0 {
		t.Fatalf("breakers %+v seen from the first Queue, want closed", b)
	}
}

// TestBreaker_OneProbe lets two Queues' Work loops, 4 workers each, race
// for the probe of one breaker: exactly one run starts, and after it fails
// none until the doubled cool-down ends.
func TestBreaker_OneProbe(t *testing.T) {
	t.Parallel()
	clk := newMock()
	b := litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: 30 * time.Second})
	q1, path := openQueue(t, litequeue.Options{Clock: clk, Retry: breakerRetry})
	q2 := openAt(t, path, litequeue.Options{Clock: clk, Retry: breakerRetry})
	var runs atomic.Int32
	h := func(ctx context.Context, job *litequeue.Job) error {
		runs.Add(1)
		return errDown
	}
	q1.Handle("k", h, b)
	q2.Handle("k", h, b)
	opened := trip(t, q1, clk, 1)
	for range 20 {
		enqueue(t, q1, "k", nil)
	}
	runs.Store(0)
	clk.Set(opened.Add(30 * time.Second))
	stop1 := startWork(t, q1, litequeue.WorkerOptions{Concurrency: 4})
	stop2 := startWork(t, q2, litequeue.WorkerOptions{Concurrency: 4})
	waitFor(t, "the probe to fail", func() bool { return breakers(t, q1)["k"].Trips == 2 })
	if err := stop1(); err != nil {
		t.Fatal(err)
	}
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if got := runs.Load(); got != 1 {
		t.Fatalf("%d runs after the cool-down, want 1 probe", got)
	}
}

// TestBreaker_WorkWakes checks that an idle Work loop sleeps through the
// cool-down and takes the probe when the clock reaches its end.
func TestBreaker_WorkWakes(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce})
	q.Handle("k", outcomeHandler, litequeue.WithBreaker(litequeue.Breaker{Failures: 2, Cooldown: 30 * time.Second}))
	trip(t, q, clk, 2)
	probe := enqueue(t, q, "k", "ok")
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 2})
	defer stop()
	clk.Add(30 * time.Second)
	waitFor(t, "the probe to complete", func() bool { return get(t, q, probe.ID).State == litequeue.Completed })
	waitFor(t, "the breaker to close", func() bool { return len(breakers(t, q)) == 0 })
}

// TestBreaker_Reset closes an open breaker by hand.
func TestBreaker_Reset(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce})
	q.Handle("k", outcomeHandler, litequeue.WithBreaker(litequeue.Breaker{Failures: 1}))
	trip(t, q, clk, 1)
	enqueue(t, q, "k", "ok")
	enqueue(t, q, "k", "ok")
	if n := runDue(t, q); n != 0 {
		t.Fatalf("RunDue ran %d while open, want 0", n)
	}
	if err := q.ResetBreaker(t.Context(), "k"); err != nil {
		t.Fatal(err)
	}
	if n := runDue(t, q); n != 2 {
		t.Fatalf("RunDue ran %d after ResetBreaker, want 2", n)
	}
}

// TestBreaker_Off checks that a handler without WithBreaker never opens
// one, however its runs fail.
func TestBreaker_Off(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Retry: dieAtOnce})
	q.Handle("k", outcomeHandler)
	for range litequeue.DefaultBreakerFailures + 5 {
		enqueue(t, q, "k", "fail")
	}
	if n := runDue(t, q); n != litequeue.DefaultBreakerFailures+5 {
		t.Fatalf("RunDue ran %d, want every job", n)
	}
	if b := breakers(t, q); len(b) != 0 {
		t.Fatalf("breakers %+v without WithBreaker, want none", b)
	}
}

// TestBreaker_Invalid checks that Handle panics on a Breaker out of its
// limits, naming the value and the limit.
func TestBreaker_Invalid(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for _, tc := range []struct {
		b    litequeue.Breaker
		want string
	}{
		{litequeue.Breaker{Failures: -1}, "Failures -1 is under the minimum of 1"},
		{litequeue.Breaker{Ratio: 1.5}, "Ratio 1.5 is over the limit of 1"},
		{litequeue.Breaker{Ratio: -0.1}, "Ratio -0.1 must be positive"},
		{litequeue.Breaker{Window: -time.Second}, "Window -1s must be positive"},
		{litequeue.Breaker{Cooldown: -time.Second}, "Cooldown -1s must be positive"},
		{litequeue.Breaker{Cooldown: time.Minute, MaxCooldown: time.Second}, "MaxCooldown 1s is under the minimum of 1m0s"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			// The kind is not named for the case: the message must come
			// from the check.
			kind := fmt.Sprintf("k%v", tc.b)
			want := fmt.Sprintf("litequeue: Handle(%q): WithBreaker: %s", kind, tc.want)
			defer func() {
				if r := recover(); r != want {
					t.Fatalf("Handle panicked with %v, want %q", r, want)
				}
			}()
			q.Handle(kind, outcomeHandler, litequeue.WithBreaker(tc.b))
		})
	}
	// A zero MaxCooldown under a long Cooldown takes the Cooldown.
	q.Handle("long", outcomeHandler, litequeue.WithBreaker(litequeue.Breaker{Cooldown: time.Hour}))
}

// TestBreaker_StatsOfOlderFile reads the Stats of a file of version 3,
// which has no breakers' table, without migrating it: no breakers.
func TestBreaker_StatsOfOlderFile(t *testing.T) {
	t.Parallel()
	fileOnly(t, "OpenReadOnly reads a file")
	ro := openReadOnly(t, oldFile(t, 3))
	if b := breakers(t, ro); b == nil || len(b) != 0 {
		t.Fatalf("Stats.Breakers = %#v, want empty", b)
	}
}

// TestBreaker_NextDueOfOlderFile: NextDue on a file of an older schema,
// which OpenReadOnly leaves without the breakers' table, with a handler
// that has a breaker: the breakers are read only where their table is.
func TestBreaker_NextDueOfOlderFile(t *testing.T) {
	t.Parallel()
	fileOnly(t, "OpenReadOnly reads a file")
	for _, v := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("version ", v), func(t *testing.T) {
			ro := openReadOnly(t, oldFile(t, v))
			ro.Handle("send", func(context.Context, *litequeue.Job) error { return nil }, litequeue.WithBreaker(litequeue.Breaker{}))
			if _, _, err := ro.NextDue(t.Context()); err != nil {
				t.Errorf("NextDue: %v", err)
			}
		})
	}
}

// TestBreaker_TripsOnce fails the runs of two Queues' Work loops, 4
// workers each, at once: the breaker opens once, every run's end is
// stored (none is left running by a failed write), and the jobs not yet
// claimed wait.
func TestBreaker_TripsOnce(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	b := litequeue.WithBreaker(litequeue.Breaker{Failures: 5, Cooldown: time.Hour})
	q1, path := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce, OnEvent: ev.record})
	q2 := openAt(t, path, litequeue.Options{Clock: clk, Retry: dieAtOnce, OnEvent: ev.record})
	var runs atomic.Int32
	h := func(ctx context.Context, job *litequeue.Job) error {
		runs.Add(1)
		return errDown
	}
	q1.Handle("k", h, b)
	q2.Handle("k", h, b)
	const jobs = 80
	for range jobs {
		enqueue(t, q1, "k", nil)
	}
	stop1 := startWork(t, q1, litequeue.WorkerOptions{Concurrency: 4})
	stop2 := startWork(t, q2, litequeue.WorkerOptions{Concurrency: 4})
	waitFor(t, "the breaker to open", func() bool { return len(breakers(t, q1)) == 1 })
	waitFor(t, "the runs in flight to end", func() bool {
		s, err := q1.Stats(t.Context())
		return err == nil && s.Queues["default"].Running == 0
	})
	if err := stop1(); err != nil {
		t.Fatal(err)
	}
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if got := ev.count("job.breaker_opened"); got != 1 {
		t.Fatalf("job.breaker_opened fired %d times, want 1", got)
	}
	s, err := q1.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Jobs claimed before the breaker opened still run: up to 4 times
	// Concurrency per Work loop, which leases ahead for short handlers;
	// about 5+2·4·4 of the 80 run.
	if got, want := s.Queues["default"].Dead, int(runs.Load()); got != want || got < 5 || got >= jobs {
		t.Fatalf("%d dead jobs after %d runs, want one per run, at least 5 and fewer than %d", got, want, jobs)
	}
	t.Logf("%d runs of %d jobs before the breaker held the rest back", runs.Load(), jobs)
}

// TestBreaker_ClosedStartsFresh closes a breaker that 5 failures in a
// 1m window opened, by its probe or by hand: the failures that opened it
// no longer count, so one more failure 1s later leaves it closed, and it
// opens again only at the 5th new one, with Trips counted afresh.
func TestBreaker_ClosedStartsFresh(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"probe", "reset"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce})
			q.Handle("k", outcomeHandler, litequeue.WithBreaker(litequeue.Breaker{Failures: 5, Window: time.Minute, Cooldown: 10 * time.Second}))
			trip(t, q, clk, 5)
			clk.Add(10 * time.Second)
			if how == "probe" {
				enqueue(t, q, "k", "ok")
				if n := runDue(t, q); n != 1 {
					t.Fatalf("RunDue at the cool-down's end ran %d, want 1 probe", n)
				}
			} else if err := q.ResetBreaker(t.Context(), "k"); err != nil {
				t.Fatal(err)
			}
			if b := breakers(t, q); len(b) != 0 {
				t.Fatalf("breakers %+v after the %s, want closed", b, how)
			}
			clk.Add(time.Second)
			for i := range 5 {
				enqueue(t, q, "k", "fail")
				if n := runDue(t, q); n != 1 {
					t.Fatalf("RunDue ran %d for failure %d after the close, want 1", n, i+1)
				}
				if _, open := breakers(t, q)["k"]; open != (i == 4) {
					t.Fatalf("breaker open = %v after %d failures since it closed, want %v", open, i+1, i == 4)
				}
			}
			want := litequeue.BreakerStats{State: "open", OpenedAt: clk.Now(), Until: clk.Now().Add(10 * time.Second), Trips: 1}
			if diff := cmp.Diff(want, breakers(t, q)["k"]); diff != "" {
				t.Fatalf("breaker opened again (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBreaker_WakesOtherQueues shuts a kind with a breaker while another
// Queue's Work is idle with a job of the kind due, then lets it through
// from the first Queue: by hand, by a probe that completes, or by a probe
// that fails, after which the idle Work takes the next probe when the
// doubled cool-down ends. On PostgreSQL only a notification makes an idle
// Work look again, so the clock stands still where a step would wake it
// by itself; on the file it sees the commit.
func TestBreaker_WakesOtherQueues(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"reset", "probe completed", "probe failed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			// The probe's lease outlasts the test: its expiry would wake
			// the idle Work by itself.
			opts := litequeue.Options{Clock: clk, Retry: dieAtOnce, VisibilityTimeout: time.Hour}
			q1, path := openQueue(t, opts)
			q2 := openAt(t, path, opts)
			b := litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: 30 * time.Second})
			g := newGate()
			q1.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				if string(job.Payload) != `"hold"` {
					return outcomeHandler(ctx, job)
				}
				g.handle(ctx, job)
				if how == "probe failed" {
					return errDown
				}
				return nil
			}, b)
			var ran atomic.Bool
			q2.Handle("k", func(context.Context, *litequeue.Job) error { ran.Store(true); return nil }, b)
			q2.Handle("other", func(context.Context, *litequeue.Job) error { return nil })
			trip(t, q1, clk, 1)
			var probe *litequeue.Job
			if how != "reset" {
				probe = enqueue(t, q1, "k", "hold", litequeue.OnQueue("one"))
				clk.Add(30 * time.Second)
				stop1 := startWork(t, q1, litequeue.WorkerOptions{Queues: []string{"one"}})
				defer stop1()
				<-g.started
			}
			waiting := enqueue(t, q1, "k", "ok", litequeue.OnQueue("two"))
			// Jobs of another kind that the second Queue runs: the first
			// at its first look, the second once told of it; then that
			// Queue has read the breaker, and is idle with nothing to
			// look for until it is told of something again.
			other := enqueue(t, q1, "other", nil, litequeue.OnQueue("two"))
			stop2 := startWork(t, q2, litequeue.WorkerOptions{Queues: []string{"two"}})
			defer stop2()
			waitFor(t, "the other kind's job to complete", func() bool { return get(t, q1, other.ID).State == litequeue.Completed })
			other = enqueue(t, q1, "other", nil, litequeue.OnQueue("two"))
			waitFor(t, "the other kind's next job to complete", func() bool { return get(t, q1, other.ID).State == litequeue.Completed })
			if got := get(t, q1, waiting.ID).State; got != litequeue.Pending || ran.Load() {
				t.Fatalf("the waiting job is %s while the breaker is shut, want pending", got)
			}
			switch how {
			case "reset":
				if err := q1.ResetBreaker(t.Context(), "k"); err != nil {
					t.Fatal(err)
				}
			default:
				close(g.release)
				waitFor(t, "the probe to end", func() bool { return get(t, q1, probe.ID).State != litequeue.Running })
			}
			// The clock steps for the file's poll, and after a failed probe
			// to the cool-down's end and a poll past it: no further, to
			// the probe's lease expiry, which would wake the idle Work.
			step, until := !onPostgres, time.Time{}
			if how == "probe failed" {
				got := breakers(t, q1)["k"]
				if got.Trips != 2 || got.Until.Sub(clk.Now()) != time.Minute {
					t.Fatalf("breaker %+v after the failed probe, want open 1m more with 2 trips", got)
				}
				step, until = true, got.Until.Add(2*time.Second)
			}
			waitFor(t, "the other Queue's idle Work to take its job", func() bool {
				if step && !ran.Load() && (until.IsZero() || clk.Now().Before(until)) {
					clk.Add(100 * time.Millisecond)
				}
				return ran.Load()
			})
			if how == "probe failed" && clk.Now().Before(get(t, q1, probe.ID).FinishedAt.Add(time.Minute)) {
				t.Fatalf("the next probe ran at %v, before the doubled cool-down's end", clk.Now())
			}
		})
	}
}

// TestBreaker_WakesLoops trips the breaker of a kind, then lets a probe
// run in one Work loop of a Queue while another loop of the same Queue
// is idle with a job of the kind due: the probe's completion closes the
// breaker, and wakes that loop at its commit, in-process, the clock
// standing still, so that no poll comes. On the file it runs with its
// notifications and without (a Work that polls, where they do not run).
func TestBreaker_WakesLoops(t *testing.T) {
	t.Parallel()
	// The probe's lease outlasts the test: its expiry would wake the idle
	// loop by itself.
	opts := litequeue.Options{Retry: dieAtOnce, VisibilityTimeout: time.Hour}
	forWatches(t, opts, 0, func(t *testing.T, q *litequeue.Queue, clk *timerClock) {
		g := newGate()
		var ran atomic.Bool
		q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
			switch string(job.Payload) {
			case `"hold"`:
				return g.handle(ctx, job)
			case `"ok"`:
				ran.Store(true)
			}
			return outcomeHandler(ctx, job)
		}, litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: 30 * time.Second}))
		trip(t, q, clk.Mock, 1)
		probe := enqueue(t, q, "k", "hold", litequeue.OnQueue("one"))
		clk.Add(30 * time.Second)
		// The second loop finds the breaker shut to all but the probe.
		takenOnceHeldEnds(t, q, g, probe, func() *litequeue.Job {
			return enqueue(t, q, "k", "ok", litequeue.OnQueue("two"))
		}, &ran)
	})
}

// TestBreaker_ResetRefuses checks that ResetBreaker refuses an empty kind,
// naming it, and changes nothing.
func TestBreaker_ResetRefuses(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: dieAtOnce})
	q.Handle("k", outcomeHandler, litequeue.WithBreaker(litequeue.Breaker{Failures: 1}))
	trip(t, q, clk, 1)
	before := breakers(t, q)
	err := q.ResetBreaker(t.Context(), "")
	if err == nil || !strings.Contains(err.Error(), "reset breaker: the kind's name is empty") {
		t.Fatalf("ResetBreaker(\"\") = %v, want an error naming the empty kind", err)
	}
	if diff := cmp.Diff(before, breakers(t, q)); diff != "" {
		t.Fatalf("breakers after the refusal (-before +after):\n%s", diff)
	}
}

// errDown is the failure of a dependency that is down.
var errDown = errors.New("dependency down")

// breakers returns the breakers of q's Stats that are not closed.
func breakers(tb testing.TB, q *litequeue.Queue) map[string]litequeue.BreakerStats {
	tb.Helper()
	s, err := q.Stats(tb.Context())
	if err != nil {
		tb.Fatalf("Stats: %v", err)
	}
	return s.Breakers
}

// outcomeHandler fails, completes, discards, cancels or snoozes each job
// as its payload says.
func outcomeHandler(ctx context.Context, job *litequeue.Job) error {
	var what string
	if err := job.Decode(&what); err != nil {
		return err
	}
	switch what {
	case "fail":
		return errDown
	case "permanent":
		return litequeue.Permanent(errDown)
	case "panic":
		panic("down")
	case "discard":
		return fmt.Errorf("no such account: %w", litequeue.ErrDiscard)
	case "cancel":
		return litequeue.CancelJob(nil)
	case "snooze":
		return litequeue.Snooze(time.Hour)
	}
	return nil
}
