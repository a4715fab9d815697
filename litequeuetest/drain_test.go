package litequeuetest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/litequeuetest"
)

func TestDrain_RetriesUntilDone(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	var starts []time.Duration
	q.Handle("sync", func(ctx context.Context, job *litequeue.Job) error {
		starts = append(starts, clk.Now().Sub(epoch))
		if job.Attempt < 3 {
			return errors.New("busy")
		}
		return nil
	})
	job := enqueue(t, q, "sync", nil)

	r := record(t)
	if got, want := litequeuetest.Drain(r, q, clk), 3; got != want {
		t.Errorf("Drain = %d runs, want %d", got, want)
	}
	r.passed(t)
	want := []time.Duration{0, 2 * time.Second, 6 * time.Second}
	if len(starts) != len(want) || starts[0] != want[0] || starts[1] != want[1] || starts[2] != want[2] {
		t.Errorf("runs started at %v, want %v", starts, want)
	}
	if got, want := clk.Now(), epoch.Add(6*time.Second); !got.Equal(want) {
		t.Errorf("clock at %v after Drain, want %v (the last run)", got, want)
	}
	if got := get(t, q, job.ID).State; got != litequeue.Completed {
		t.Errorf("job is %s, want completed", got)
	}
}

func TestDrain_ToDead(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	q.Handle("doomed", func(ctx context.Context, job *litequeue.Job) error { return errors.New("down") })
	job := enqueue(t, q, "doomed", nil)

	r := record(t)
	if got, want := litequeuetest.Drain(r, q, clk), 8; got != want {
		t.Errorf("Drain = %d runs, want %d (the default tries)", got, want)
	}
	r.passed(t)
	if got, want := clk.Now().Sub(epoch), 254*time.Second; got != want {
		t.Errorf("clock moved %v, want %v (2s+4s+…+128s)", got, want)
	}
	if got := get(t, q, job.ID).State; got != litequeue.Dead {
		t.Errorf("job is %s, want dead", got)
	}
}

func TestDrain_FollowUps(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	q.Handle("signup", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, to string) error {
		if _, err := q.Enqueue(ctx, "email.welcome", to); err != nil { // no handler here
			return err
		}
		_, err := q.Enqueue(ctx, "audit", to, litequeue.Delay(time.Hour))
		return err
	}))
	audited := 0
	q.Handle("audit", func(ctx context.Context, job *litequeue.Job) error { audited++; return nil })
	enqueue(t, q, "signup", "ada@example.com")

	r := record(t)
	if got, want := litequeuetest.Drain(r, q, clk), 2; got != want {
		t.Errorf("Drain = %d runs, want %d: signup, then audit an hour later", got, want)
	}
	r.passed(t)
	if audited != 1 || !clk.Now().Equal(epoch.Add(time.Hour)) {
		t.Errorf("audited %d times, clock at %v; want once, at %v", audited, clk.Now(), epoch.Add(time.Hour))
	}
	litequeuetest.RequireEnqueued(t, q, "email.welcome",
		litequeuetest.Payload("ada@example.com"), litequeuetest.InState(litequeue.Pending))
}

func TestDrain_NothingDue(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	q.Handle("noop", func(ctx context.Context, job *litequeue.Job) error { return nil })
	enqueue(t, q, "unhandled", nil)

	r := record(t)
	if got := litequeuetest.Drain(r, q, clk); got != 0 {
		t.Errorf("Drain = %d runs, want 0", got)
	}
	r.passed(t)
	if !clk.Now().Equal(epoch) {
		t.Errorf("clock moved to %v, want it at %v", clk.Now(), epoch)
	}
}

// snoozer is a handler that never settles: it always snoozes for d.
func snoozer(d time.Duration) litequeue.Handler {
	return func(ctx context.Context, job *litequeue.Job) error { return litequeue.Snooze(d) }
}

func TestDrain_MaxSteps(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	q.Handle("poll", snoozer(time.Minute))
	enqueue(t, q, "poll", `{"device":7}`)

	r := record(t)
	if got, want := litequeuetest.Drain(r, q, clk, litequeuetest.MaxSteps(5)), 5; got != want {
		t.Errorf("Drain = %d runs, want %d", got, want)
	}
	r.failed(t,
		"litequeuetest.Drain: the queue did not settle after 5 runs",
		"still due after the MaxSteps of 5 calls of RunDue (at +4m0s); the next at +5m0s",
		`job 1 poll: queue "default", pending, attempt 0 of 8, priority 0, run at +5m0s, payload "{\"device\":7}"`)
	if got, want := clk.Now(), epoch.Add(4*time.Minute); !got.Equal(want) {
		t.Errorf("clock at %v, want %v", got, want)
	}
}

func TestDrain_DefaultMaxSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand calls of RunDue")
	}
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{Synchronous: "normal"})
	q.Handle("poll", snoozer(time.Second))
	enqueue(t, q, "poll", nil)

	r := record(t)
	if got, want := litequeuetest.Drain(r, q, clk), litequeuetest.DefaultMaxSteps; got != want {
		t.Errorf("Drain = %d runs, want %d", got, want)
	}
	r.failed(t, "MaxSteps of 1000 calls", "job 1 poll")
}

func TestDrain_MaxSpan(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	q.Handle("poll", snoozer(time.Hour))
	enqueue(t, q, "poll", nil)

	r := record(t)
	if got, want := litequeuetest.Drain(r, q, clk), 25; got != want {
		t.Errorf("Drain = %d runs, want %d: at +0h, +1h … +24h", got, want)
	}
	r.failed(t, "the next is due at +25h0m0s, past the MaxSpan of 24h0m0s", "job 1 poll", "payload null")
	if got, want := clk.Now(), epoch.Add(litequeuetest.DefaultMaxSpan); !got.Equal(want) {
		t.Errorf("clock at %v, want %v: never past the span", got, want)
	}
}

func TestDrain_FarFuture(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	q.Handle("report", func(ctx context.Context, job *litequeue.Job) error { return nil })
	job := enqueue(t, q, "report", nil, litequeue.Delay(48*time.Hour))

	r := record(t)
	if got := litequeuetest.Drain(r, q, clk); got != 0 {
		t.Errorf("Drain = %d runs, want 0", got)
	}
	r.failed(t, "the next is due at +48h0m0s, past the MaxSpan of 24h0m0s", "job 1 report", "run at +48h0m0s")
	if !clk.Now().Equal(epoch) {
		t.Errorf("clock moved to %v, want it at %v", clk.Now(), epoch)
	}

	r = record(t)
	if got := litequeuetest.Drain(r, q, clk, litequeuetest.MaxSpan(72*time.Hour)); got != 1 {
		t.Errorf("Drain with MaxSpan(72h) = %d runs, want 1", got)
	}
	r.passed(t)
	if got := get(t, q, job.ID).State; got != litequeue.Completed {
		t.Errorf("job is %s, want completed", got)
	}
}

func TestDrain_BadOptions(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	for _, tc := range []struct {
		opt  litequeuetest.DrainOption
		want string
	}{
		{litequeuetest.MaxSteps(0), "litequeuetest.Drain: MaxSteps 0 is below the minimum of 1"},
		{litequeuetest.MaxSpan(-time.Second), "litequeuetest.Drain: MaxSpan -1s is not positive"},
	} {
		r := record(t)
		litequeuetest.Drain(r, q, clk, tc.opt)
		r.failed(t, tc.want)
	}
}

// TestDrain_Graph: Drain runs a whole dependency graph on the mock
// clock: a fan-out whose one branch retries with backoff and whose
// join is scheduled an hour ahead; the join starts once both branches
// completed and its hour has come, and Drain leaves the clock there.
func TestDrain_Graph(t *testing.T) {
	t.Parallel()
	q, clk := openQueue(t, litequeue.Options{})
	started := map[int64]time.Duration{}
	q.Handle("step", func(ctx context.Context, job *litequeue.Job) error {
		if job.Attempt < 2 && job.Priority == 1 {
			return errors.New("busy")
		}
		started[job.ID] = clk.Now().Sub(epoch)
		return nil
	})
	root := enqueue(t, q, "step", nil)
	flaky := enqueue(t, q, "step", nil, litequeue.Priority(1), litequeue.DependsOn(root.ID))
	other := enqueue(t, q, "step", nil, litequeue.DependsOn(root.ID))
	join := enqueue(t, q, "step", nil, litequeue.DependsOn(flaky.ID, other.ID), litequeue.Delay(time.Hour))

	r := record(t)
	if got, want := litequeuetest.Drain(r, q, clk), 5; got != want {
		t.Errorf("Drain = %d runs, want %d (the flaky branch twice)", got, want)
	}
	r.passed(t)
	want := map[int64]time.Duration{root.ID: 0, other.ID: 0, flaky.ID: 2 * time.Second, join.ID: time.Hour}
	for id, at := range want {
		if started[id] != at {
			t.Errorf("job %d completed its run at %v, want %v", id, started[id], at)
		}
	}
}
