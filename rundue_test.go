package litequeue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// stepAll steps the clock to each NextDue and runs what is due, until
// nothing is pending, and returns how many runs each RunDue made.
func stepAll(t *testing.T, q *litequeue.Queue, clk interface{ Set(time.Time) }) []int {
	t.Helper()
	var counts []int
	for range 100 {
		next, ok := nextDue(t, q)
		if !ok {
			return counts
		}
		clk.Set(next)
		counts = append(counts, runDue(t, q))
	}
	t.Fatal("still due after 100 steps")
	return nil
}

// TestClock_BackAnHour sets the clock back an hour between operations.
// Pending jobs keep their RunAt, so a scheduled job, a retry, and even a
// job that was due but not yet run each wait an extra hour, and then run
// on their schedule, once, with their retries 10s apart as the policy
// says; a job enqueued after the jump is due at once, ahead of them.
// Finished jobs are kept until their TTL ends on the clock, an hour later
// than they would have been.
func TestClock_BackAnHour(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, log := jumpQueue(t, clk, litequeue.Options{Clock: clk, OnEvent: ev.record})
	done := enqueue(t, q, "ok", nil)
	dead := enqueue(t, q, "doomed", nil)
	retry := enqueue(t, q, "flaky", nil)
	sched := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	if n := runDue(t, q); n != 3 {
		t.Fatalf("RunDue at epoch ran %d, want 3", n)
	}
	log.take()
	backlog := enqueue(t, q, "ok", nil) // due, not yet run

	back := epoch.Add(-time.Hour)
	clk.Set(back)
	fresh := enqueue(t, q, "ok", nil)
	if next, _ := nextDue(t, q); !next.Equal(back) {
		t.Fatalf("NextDue = %v, want the fresh job's %v", next, back)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue after the jump ran %d, want only the fresh job: the backlog is due in an hour again", n)
	}
	if next, _ := nextDue(t, q); !next.Equal(epoch) {
		t.Fatalf("NextDue = %v, want the backlog at its old RunAt %v", next, epoch)
	}
	clk.Set(epoch.Add(-time.Millisecond))
	if n := runDue(t, q); n != 0 {
		t.Fatalf("RunDue an hour after the jump ran %d, want 0: nothing is due yet", n)
	}
	log.take()
	stepAll(t, q, clk)
	want := []run{
		{backlog.ID, 1, epoch},
		{retry.ID, 2, epoch.Add(10 * time.Second)},
		{retry.ID, 3, epoch.Add(20 * time.Second)},
		{sched.ID, 1, epoch.Add(time.Hour)},
	}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Fatalf("runs after the jump (-want +got):\n%s", diff)
	}
	for id, state := range map[int64]litequeue.State{
		done.ID: litequeue.Completed, dead.ID: litequeue.Dead, retry.ID: litequeue.Dead,
		sched.ID: litequeue.Completed, fresh.ID: litequeue.Completed, backlog.ID: litequeue.Completed,
	} {
		if got := get(t, q, id).State; got != state {
			t.Errorf("job %d is %s, want %s", id, got, state)
		}
	}
	if n := ev.count("job.dead"); n != 2 {
		t.Errorf("%d job.dead events for 2 deaths", n)
	}
	// The job completed at epoch is kept until epoch+24h on the clock:
	// 25 hours after the jump.
	clk.Set(epoch.Add(litequeue.DefaultKeepFinished - time.Millisecond))
	runDue(t, q)
	if !exists(t, q, done.ID) {
		t.Fatal("a completed job was purged before KeepFinished, counted from its FinishedAt")
	}
	clk.Set(epoch.Add(litequeue.DefaultKeepFinished))
	runDue(t, q)
	if exists(t, q, done.ID) || !exists(t, q, dead.ID) {
		t.Fatal("retention after the jump: want the completed job purged, the dead one kept")
	}
}

// TestClock_ForwardFourteenDays moves the clock fourteen days ahead between
// operations. Everything scheduled in between becomes due at once and one
// RunDue runs each such job once, in priority, then RunAt, then ID order:
// a retry uses one try, not all of them — its next retry is 10s after the
// jump, as the policy says. A job scheduled beyond the jump stays
// scheduled. The janitor purges the finished and dead jobs and the keys
// whose TTL passed.
func TestClock_ForwardFourteenDays(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, log := jumpQueue(t, clk, litequeue.Options{Clock: clk, OnEvent: ev.record})
	done := enqueue(t, q, "ok", nil)
	dead := enqueue(t, q, "doomed", nil)
	retry := enqueue(t, q, "flaky", nil)
	nap := enqueue(t, q, "nap", nil)
	inHour := enqueue(t, q, "ok", nil, litequeue.Delay(time.Hour))
	inWeek := enqueue(t, q, "ok", nil, litequeue.Delay(7*24*time.Hour))
	urgent := enqueue(t, q, "ok", nil, litequeue.Delay(2*24*time.Hour), litequeue.Priority(5))
	later := enqueue(t, q, "ok", nil, litequeue.Delay(20*24*time.Hour))
	mark(t, q, "key", time.Hour)
	if n := runDue(t, q); n != 4 {
		t.Fatalf("RunDue at epoch ran %d, want 4", n)
	}
	log.take()

	jump := epoch.Add(14 * 24 * time.Hour)
	clk.Set(jump)
	if next, _ := nextDue(t, q); next.After(jump) {
		t.Fatalf("NextDue = %v after the jump to %v, want work due now", next, jump)
	}
	if n := runDue(t, q); n != 5 {
		t.Fatalf("RunDue after the jump ran %d, want 5: each due job once", n)
	}
	want := []run{
		{urgent.ID, 1, jump},
		{retry.ID, 2, jump},
		{nap.ID, 1, jump}, // snoozed: the same try again
		{inHour.ID, 1, jump},
		{inWeek.ID, 1, jump},
	}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Fatalf("runs after the jump (-want +got):\n%s", diff)
	}
	if got := get(t, q, retry.ID); got.State != litequeue.Pending || !got.RunAt.Equal(jump.Add(10*time.Second)) {
		t.Fatalf("retry after the jump: %s at %v, want pending at %v", got.State, got.RunAt, jump.Add(10*time.Second))
	}
	for _, id := range []int64{done.ID, dead.ID} {
		if exists(t, q, id) || historyRows(t, q, id) != 0 {
			t.Errorf("job %d or its history kept after its TTL passed in the jump", id)
		}
	}
	if seen(t, q, "key") {
		t.Error("key seen after its TTL passed in the jump")
	}

	if next, _ := nextDue(t, q); !next.Equal(jump.Add(10 * time.Second)) {
		t.Fatalf("NextDue = %v, want the retry 10s after the jump", next)
	}
	clk.Set(jump.Add(10 * time.Second))
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue 10s after the jump ran %d, want the retry's last try", n)
	}
	if got := get(t, q, retry.ID); got.State != litequeue.Dead || got.Attempt != 3 || !got.FinishedAt.Equal(jump.Add(10*time.Second)) {
		t.Fatalf("retry = %s after attempt %d at %v, want dead after 3 at %v", got.State, got.Attempt, got.FinishedAt, jump.Add(10*time.Second))
	}
	if next, _ := nextDue(t, q); !next.Equal(later.RunAt) || get(t, q, later.ID).State != litequeue.Pending {
		t.Fatalf("NextDue = %v, want the job scheduled beyond the jump, at %v", next, later.RunAt)
	}
	if n := ev.count("job.dead"); n != 2 {
		t.Errorf("%d job.dead events for 2 deaths", n)
	}
}

// TestQueue_RunDueOrder runs due jobs by priority, then RunAt, then ID, and
// leaves future jobs and unhandled kinds alone.
func TestQueue_RunDueOrder(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	var order []string
	q.Handle("k", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, name string) error {
		order = append(order, name)
		return nil
	}))
	enqueue(t, q, "k", "low-late", litequeue.At(epoch.Add(-time.Second)))
	enqueue(t, q, "k", "low-early", litequeue.At(epoch.Add(-time.Minute)))
	enqueue(t, q, "k", "high", litequeue.Priority(5))
	enqueue(t, q, "k", "future", litequeue.Delay(time.Hour), litequeue.Priority(9))
	other := enqueue(t, q, "other", "unhandled")
	enqueue(t, q, "k", "low-same-time", litequeue.At(epoch.Add(-time.Second)))
	runDue(t, q)
	if diff := cmp.Diff([]string{"high", "low-early", "low-late", "low-same-time"}, order); diff != "" {
		t.Fatalf("run order (-want +got):\n%s", diff)
	}
	if got := get(t, q, other.ID).State; got != litequeue.Pending {
		t.Fatalf("unhandled kind: state %s, want pending", got)
	}
	next, ok, err := q.NextDue(t.Context())
	if err != nil || !ok || !next.Equal(epoch.Add(time.Hour)) {
		t.Fatalf("NextDue = %v %v %v, want the future job's RunAt", next, ok, err)
	}
}

// TestWriter_JoinPanics: a panic in the claim that rides a run's commit —
// an Options.Rand that panics, drawn for the chained job's retry delay —
// is that commit's error, not an unwound leader: the Queue goes on.
func TestWriter_JoinPanics(t *testing.T) {
	t.Parallel()
	var draws atomic.Int64
	rnd := func() float64 {
		if draws.Add(1) == 2 { // the second job's, claimed with the first's completion
			panic("bad rand")
		}
		return 0.5
	}
	q, _ := openQueue(t, litequeue.Options{Clock: clock.NewMock(), Rand: rnd})
	q.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
	for range 2 {
		if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.RunDue(t.Context()) // its error is the panic's; what counts is that it returns
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunDue did not return after the panic in the chained claim")
	}
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatalf("Enqueue after the panic: %v", err)
	}
}

// run is one handler call: which job, which try, and when.
type run struct {
	ID      int64
	Attempt int
	At      time.Time
}

// runLog records handler calls; safe for concurrent use.
type runLog struct {
	mu   sync.Mutex
	runs []run
}

func (l *runLog) add(job *litequeue.Job, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, run{job.ID, job.Attempt, at})
}

// take returns the calls recorded since the last take.
func (l *runLog) take() []run {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.runs
	l.runs = nil
	return r
}

// jumpQueue opens a queue with fixedPolicy (3 tries, 10s apart) and the
// kinds the clock tests use, each call recorded in the log: ok succeeds,
// flaky always fails, doomed dies at once, nap snoozes an hour on its
// first call and then succeeds.
func jumpQueue(t *testing.T, clk interface{ Now() time.Time }, opts litequeue.Options) (*litequeue.Queue, *runLog) {
	t.Helper()
	opts.Retry = fixedPolicy
	q, _ := openQueue(t, opts)
	log := new(runLog)
	handle := func(kind string, fn func(job *litequeue.Job) error) {
		q.Handle(kind, func(ctx context.Context, job *litequeue.Job) error {
			log.add(job, clk.Now())
			return fn(job)
		})
	}
	handle("ok", func(*litequeue.Job) error { return nil })
	handle("flaky", func(*litequeue.Job) error { return errors.New("down") })
	handle("doomed", func(*litequeue.Job) error { return litequeue.Permanent(errors.New("doomed")) })
	napped := map[int64]bool{}
	handle("nap", func(job *litequeue.Job) error {
		if !napped[job.ID] {
			napped[job.ID] = true
			return litequeue.Snooze(time.Hour)
		}
		return nil
	})
	return q, log
}

// nextDue calls NextDue and fails the test on error.
func nextDue(t *testing.T, q *litequeue.Queue) (time.Time, bool) {
	t.Helper()
	next, ok, err := q.NextDue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return next, ok
}
