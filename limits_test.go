package litequeue_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestHandle_LimitMistakes checks that Handle panics on a limit out of
// range, naming the value.
func TestHandle_LimitMistakes(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for _, tt := range []struct {
		name string
		opt  litequeue.HandlerOption
		want string
	}{
		{"MaxRunning(0)", litequeue.MaxRunning(0), "MaxRunning(0): n must be at least 1"},
		{"MaxRunning(-2)", litequeue.MaxRunning(-2), "MaxRunning(-2): n must be at least 1"},
		{"RateLimit(0, 1s)", litequeue.RateLimit(0, time.Second), "RateLimit(0, 1s): n must be at least 1"},
		{"RateLimit(5, 0)", litequeue.RateLimit(5, 0), "RateLimit(5, 0s): per must be at least 1ms"},
		{"RateLimit(5, -1m)", litequeue.RateLimit(5, -time.Minute), "RateLimit(5, -1m0s): per must be at least 1ms"},
		{"RateLimit(5, 1µs)", litequeue.RateLimit(5, time.Microsecond), "RateLimit(5, 1µs): per must be at least 1ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg := fmt.Sprint(recover())
				if !strings.Contains(msg, tt.want) || !strings.Contains(msg, `Handle("k-`+tt.name+`")`) {
					t.Errorf("panic %q, want one naming the kind and saying %q", msg, tt.want)
				}
			}()
			q.Handle("k-"+tt.name, func(context.Context, *litequeue.Job) error { return nil }, tt.opt)
		})
	}
	// The same values in range are accepted.
	q.Handle("fine", func(context.Context, *litequeue.Job) error { return nil }, litequeue.MaxRunning(1), litequeue.RateLimit(1, time.Millisecond))
}

// peak counts the runs in progress and the most seen at once.
type peak struct {
	mu        sync.Mutex
	now, most int
}

func (p *peak) enter() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now++
	p.most = max(p.most, p.now)
}

func (p *peak) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now--
}

func (p *peak) read() (now, most int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now, p.most
}

// TestWork_MaxRunning runs 12 jobs of a kind with MaxRunning(3) under a
// Work of 8 workers, beside 6 jobs of a kind without a limit: never more
// than 3 of the kind run at once, the others run meanwhile, and every job
// completes as the runs end, the mock clock standing still.
func TestWork_MaxRunning(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	q, _ := openQueue(t, litequeue.Options{})
	const limit, jobs, others = 3, 12, 6
	var p peak
	release := make(chan struct{})
	q.Handle("capped", func(ctx context.Context, job *litequeue.Job) error {
		p.enter()
		defer p.leave()
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, litequeue.MaxRunning(limit))
	var otherRuns atomic.Int32
	q.Handle("free", func(context.Context, *litequeue.Job) error { otherRuns.Add(1); return nil })
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 8})
	defer stop()
	defer close(release) // first: a failed test's runs end, and Work stops
	for range jobs {
		enqueue(t, q, "capped", nil)
	}
	for range others {
		enqueue(t, q, "free", nil)
	}
	waitFor(t, "the other kind's jobs to run and the capped kind to fill its limit", func() bool {
		n, _ := p.read()
		return otherRuns.Load() == others && n == limit
	})
	running, err := q.List(ctx, litequeue.Filter{State: litequeue.Running, Kind: "capped"})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(running); got != limit {
		t.Errorf("%d jobs of the kind running (leased), want the limit, %d", got, limit)
	}
	for i := range jobs {
		release <- struct{}{} // one run ends; the next may start
		if i < jobs-limit {
			waitFor(t, "the next run to start", func() bool { n, _ := p.read(); return n == limit })
		}
	}
	waitFor(t, "every job to complete", func() bool {
		done, err := q.List(ctx, litequeue.Filter{State: litequeue.Completed})
		return err == nil && len(done) == jobs+others
	})
	_, most := p.read()
	if most != limit {
		t.Errorf("at most %d runs at once, want %d", most, limit)
	}
	t.Logf("%d runs of a kind with MaxRunning(%d) under 8 workers: at most %d at once; %d runs of another kind meanwhile", jobs, limit, most, otherRuns.Load())
}

// TestQueue_RateLimit steps RunDue through a kind with RateLimit(2, 1m)
// whose starts are spread out: each start leaves the window a minute
// later, and then one more may start, as a sliding window does (a fixed
// window of a minute would let two start at once at its turn).
func TestQueue_RateLimit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	var starts []time.Duration // after epoch
	q.Handle("k", func(context.Context, *litequeue.Job) error {
		starts = append(starts, clk.Now().Sub(epoch))
		return nil
	}, litequeue.RateLimit(2, time.Minute))
	enqueue(t, q, "k", nil)
	if n := runDue(t, q); n != 1 {
		t.Fatalf("first RunDue ran %d, want 1", n)
	}
	clk.Add(30 * time.Second)
	for range 5 {
		enqueue(t, q, "k", nil)
	}
	runDue(t, q) // the second start in the window
	for step := range 4 {
		next, ok, err := q.NextDue(ctx)
		if err != nil || !ok {
			t.Fatalf("NextDue: ok %v, %v", ok, err)
		}
		if want := starts[len(starts)-2] + time.Minute; next.Sub(epoch) != want {
			t.Fatalf("step %d: NextDue = epoch+%v, want epoch+%v, when the oldest start in the window leaves it", step, next.Sub(epoch), want)
		}
		clk.Set(next.Add(-time.Millisecond))
		if n := runDue(t, q); n != 0 {
			t.Fatalf("step %d: RunDue a millisecond early ran %d", step, n)
		}
		clk.Set(next)
		if n := runDue(t, q); n != 1 {
			t.Fatalf("step %d: RunDue at %v ran %d, want 1", step, next.Sub(epoch), n)
		}
	}
	want := []time.Duration{0, 30 * time.Second, time.Minute, 90 * time.Second, 2 * time.Minute, 150 * time.Second}
	if fmt.Sprint(starts) != fmt.Sprint(want) {
		t.Errorf("starts after epoch %v, want %v", starts, want)
	}
}

// TestWork_RateLimit runs a kind with RateLimit(1, 10s) under Work on the
// mock clock, which the test moves on in small steps: each run starts (is
// claimed: its job.started event's At) 10s after the one before, when the
// idle worker wakes by itself at the end of the window (no write tells it
// to).
func TestWork_RateLimit(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var mu sync.Mutex
	var starts []time.Duration // after epoch
	q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: func(ev litequeue.Event) {
		if ev.Type == "job.started" {
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, ev.At.Sub(epoch))
		}
	}})
	q.Handle("k", func(context.Context, *litequeue.Job) error { return nil }, litequeue.RateLimit(1, 10*time.Second))
	const jobs = 3
	for range jobs {
		enqueue(t, q, "k", nil)
	}
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 4})
	defer stop()
	// The clock jumps to the next due time once one lies ahead, and
	// otherwise stands still: a clock stepping on by itself while a loaded
	// machine's Work was slow to claim would stretch the gaps.
	waitFor(t, "every run, the clock moving to each next due time", func() bool {
		mu.Lock()
		n := len(starts)
		mu.Unlock()
		if n == jobs {
			return true
		}
		if due, ok, err := q.NextDue(t.Context()); err == nil && ok && due.After(clk.Now()) {
			clk.Set(due)
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	// Runs claimed by different goroutines fire their events in the order
	// they get to, not always that of their claims: compare the claims'
	// times in order.
	slices.Sort(starts)
	for i := 1; i < jobs; i++ {
		if gap := starts[i] - starts[i-1]; gap < 10*time.Second || gap > 10*time.Second+time.Second {
			t.Errorf("run %d started %v after the one before, want 10s (the window), give or take the clock's steps: starts %v", i+1, gap, starts)
		}
	}
	t.Logf("RateLimit(1, 10s) under Work: starts at epoch+%v", starts)
}

// TestWork_MaxRunningWakesOthers runs a kind with MaxRunning(1) under two
// Queues on one database, each working a queue of its own: while the
// first runs a job, the second waits with a job due, and takes it once
// that run ends. On the file the second notices the end at its poll, as
// the test moves the mock clock on; on PostgreSQL the run's end notifies
// it, the clock standing still.
func TestWork_MaxRunningWakesOthers(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk})
	q2 := openAt(t, path, litequeue.Options{Clock: clk})
	g := newGate()
	q1.Handle("k", g.handle, litequeue.MaxRunning(1))
	var ran atomic.Bool
	q2.Handle("k", func(context.Context, *litequeue.Job) error { ran.Store(true); return nil }, litequeue.MaxRunning(1))
	first := enqueue(t, q1, "k", nil, litequeue.OnQueue("one"))
	second := enqueue(t, q1, "k", nil, litequeue.OnQueue("two"))
	stop1 := startWork(t, q1, litequeue.WorkerOptions{Queues: []string{"one"}})
	defer stop1()
	<-g.started
	stop2 := startWork(t, q2, litequeue.WorkerOptions{Queues: []string{"two"}})
	defer stop2()
	for range 3 { // the second Queue's polls, while the first runs
		clk.Add(time.Second)
	}
	if got := get(t, q1, second.ID).State; got != litequeue.Pending || ran.Load() {
		t.Fatalf("the second job is %s while the first runs, want pending", got)
	}
	close(g.release)
	waitFor(t, "the first job to complete", func() bool { return get(t, q1, first.ID).State == litequeue.Completed })
	waitFor(t, "the second Queue to take its job", func() bool {
		if ran.Load() {
			return true
		}
		if !onPostgres {
			clk.Add(100 * time.Millisecond) // the second Queue's poll of the file
		}
		return false
	})
}

// TestWork_MaxRunningWakesLoops runs a kind with MaxRunning(1) under two
// Work loops of one Queue, each working a queue of its own: while the
// first runs a job, the second waits with a job due, and takes it once
// that run ends, the clock standing still, so that no poll comes. The
// run's end wakes the Queue's idle loops at its commit, in-process, as a
// notification does on PostgreSQL: on the file, with its notifications and
// without (a Work that polls, where they do not run).
func TestWork_MaxRunningWakesLoops(t *testing.T) {
	t.Parallel()
	forWatches(t, litequeue.Options{}, 0, func(t *testing.T, q *litequeue.Queue, _ *timerClock) {
		g := newGate()
		var ran atomic.Bool
		q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
			if job.Queue == "one" {
				return g.handle(ctx, job)
			}
			ran.Store(true)
			return nil
		}, litequeue.MaxRunning(1))
		first := enqueue(t, q, "k", nil, litequeue.OnQueue("one"))
		second := enqueue(t, q, "k", nil, litequeue.OnQueue("two"))
		// The second loop finds the kind at its limit.
		takenOnceHeldEnds(t, q, g, first, func() *litequeue.Job { return second }, &ran)
	})
}

// TestQueue_RateLimitClockBack sets the clock back past a start of a kind
// with RateLimit(1, 1m): the start, now ahead of the clock, is forgotten,
// so the kind is not held up until the clock catches up with it.
func TestQueue_RateLimitClockBack(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("k", func(context.Context, *litequeue.Job) error { return nil }, litequeue.RateLimit(1, time.Minute))
	clk.Set(epoch.Add(time.Hour))
	enqueue(t, q, "k", nil)
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue ran %d, want 1", n)
	}
	clk.Set(epoch.Add(time.Hour - time.Second)) // back, before the start
	enqueue(t, q, "k", nil)
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue after the clock went back ran %d, want 1", n)
	}
}

// TestQueue_Limits reads the use of the limits of a Queue's kinds, set by
// HandlerOptions and by Options.Kinds: before any run, while one runs,
// after, and once the rate window has passed. A kind without limits is
// not listed, and a Queue without handlers has none.
func TestQueue_Limits(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk, Kinds: map[string]litequeue.KindOptions{"report": {MaxRunning: 4}}})
	var during []litequeue.LimitStats // RunDue waits for the handler
	var duringErr error
	q.Handle("mail", func(ctx context.Context, job *litequeue.Job) error {
		during, duringErr = q.Limits(ctx)
		return nil
	}, litequeue.MaxRunning(2), litequeue.RateLimit(3, time.Minute))
	q.Handle("report", ok)
	q.Handle("plain", ok)
	limits := func(what string, want ...litequeue.LimitStats) {
		t.Helper()
		got, err := q.Limits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Limits %s (-want +got):\n%s", what, diff)
		}
	}
	mail := litequeue.LimitStats{Kind: "mail", MaxRunning: 2, RateLimit: 3, RatePer: time.Minute}
	report := litequeue.LimitStats{Kind: "report", MaxRunning: 4}
	limits("before any run", mail, report)

	enqueue(t, q, "mail", 1)
	enqueue(t, q, "mail", 2)
	if n := runDue(t, q); n != 2 {
		t.Fatalf("RunDue: %d runs, want 2", n)
	}
	if duringErr != nil {
		t.Fatal(duringErr)
	}
	running := mail
	running.Running, running.Starts = 1, 2
	if diff := cmp.Diff([]litequeue.LimitStats{running, report}, during); diff != "" {
		t.Errorf("Limits while the second run runs (-want +got):\n%s", diff)
	}
	started := mail
	started.Starts = 2
	limits("after the runs", started, report)
	clk.Add(time.Minute)
	limits("a minute later", mail, report)

	other := openAt(t, path, litequeue.Options{Clock: clk})
	got, err := other.Limits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]litequeue.LimitStats{}, got); diff != "" {
		t.Errorf("Limits of a Queue without handlers (-want +got):\n%s", diff)
	}
}
