package litequeue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// slowJobs is a handler for jobs that block until the test releases them,
// and that counts how many run at once and which have started.
type slowJobs struct {
	mu      sync.Mutex
	running int
	most    int
	started map[int64]bool
	release chan struct{}
	done    sync.Once
}

// newSlowJobs returns the handler; the test's end releases its jobs, before
// the Queue closes.
func newSlowJobs(tb testing.TB) *slowJobs {
	s := &slowJobs{started: make(map[int64]bool), release: make(chan struct{})}
	tb.Cleanup(s.finish)
	return s
}

// finish lets every job return, now and from now on.
func (s *slowJobs) finish() { s.done.Do(func() { close(s.release) }) }

func (s *slowJobs) handle(ctx context.Context, job *litequeue.Job) error {
	s.mu.Lock()
	s.running++
	s.most = max(s.most, s.running)
	s.started[job.ID] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running--
		s.mu.Unlock()
	}()
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// state returns how many handlers run now, the most that ever ran at once,
// and whether the job's handler has started.
func (s *slowJobs) state(id int64) (running, most int, started bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.most, s.started[id]
}

// listState lists the jobs in one state.
func listState(tb testing.TB, q *litequeue.Queue, state litequeue.State) []*litequeue.Job {
	tb.Helper()
	jobs, err := q.List(context.Background(), litequeue.Filter{State: state})
	if err != nil {
		tb.Fatal(err)
	}
	return jobs
}

// TestWork_LeasesAheadForShortHandlers: once its handlers prove short, Work
// leases up to four times Concurrency jobs, runs only Concurrency at once,
// keeps the waiting jobs' leases alive, records a Cancel of a waiting job
// without running it, and at shutdown gives the waiting jobs back without
// using a try.
func TestWork_LeasesAheadForShortHandlers(t *testing.T) {
	const concurrency, vt = 2, 30 * time.Second
	clk := newMock()
	var ev events
	q, path := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record, VisibilityTimeout: vt})
	q.Handle("fast", func(ctx context.Context, job *litequeue.Job) error { return nil })
	slow := newSlowJobs(t)
	q.Handle("slow", slow.handle)
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: concurrency, ShutdownGrace: time.Minute})

	// The mock clock stands still: the fast handlers run for 0s.
	for range 4 {
		enqueue(t, q, "fast", nil)
	}
	waitFor(t, "the fast jobs to complete", func() bool { return ev.count("job.completed") == 4 })
	const n = 4 * concurrency
	for range n {
		enqueue(t, q, "slow", nil)
	}
	waitFor(t, "Work to lease every slow job", func() bool {
		running, _, _ := slow.state(0)
		return len(listState(t, q, litequeue.Running)) == n && running == concurrency
	})

	// A waiting job: leased, its handler not started.
	var waiting *litequeue.Job
	for _, j := range listState(t, q, litequeue.Running) {
		if _, _, started := slow.state(j.ID); !started {
			waiting = j
			break
		}
	}
	if err := q.Cancel(context.Background(), waiting.ID); err != nil {
		t.Fatal(err)
	}

	// Step the clock through two timeouts, renewal by renewal: another
	// Queue on the file (another process) finds no lease to rescue.
	other := openAt(t, path, litequeue.Options{Clock: clk})
	for step := 0; step < 6; step++ {
		clk.Add(vt / 3)
		until := clk.Now().Add(vt / 2)
		waitFor(t, "every lease to be renewed", func() bool {
			for _, j := range listState(t, q, litequeue.Running) {
				if lease := leaseUntil(t, q, j.ID); lease.Before(until) {
					return false
				}
			}
			return true
		})
		if n, err := other.RunDue(context.Background()); err != nil || n != 0 {
			t.Fatalf("another Queue's RunDue: %d runs, %v", n, err)
		}
	}
	if got := get(t, q, waiting.ID); got.State != litequeue.Cancelled {
		t.Fatalf("the cancelled waiting job is %s, want cancelled", got.State)
	}
	if _, _, started := slow.state(waiting.ID); started {
		t.Fatal("the cancelled waiting job's handler ran")
	}
	if h := history(t, q, waiting.ID); len(h) != 1 || h[0].Outcome != litequeue.OutcomeCancelled {
		t.Fatalf("history of the cancelled waiting job: %+v, want one cancelled row", h)
	}
	if got := len(listState(t, q, litequeue.Running)); got != n-1 {
		t.Fatalf("%d jobs running after two timeouts, want %d", got, n-1)
	}
	var expired int
	if err := q.DB().Get(&expired, `SELECT COUNT(*) FROM litequeue_attempts WHERE outcome = 'lease_expired'`); err != nil || expired != 0 {
		t.Fatalf("%d leases expired (%v), want none", expired, err)
	}

	// Shutdown: the running handlers finish within the grace; the jobs
	// still waiting go back as they were.
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	waitFor(t, "the waiting jobs to be given back", func() bool {
		return len(listState(t, q, litequeue.Pending)) == n-concurrency-1
	})
	slow.finish()
	if err := <-stopped; err != nil {
		t.Fatalf("Work returned %v", err)
	}
	for _, j := range listState(t, q, litequeue.Pending) {
		if j.Attempt != 0 || len(history(t, q, j.ID)) != 0 {
			t.Errorf("job %d given back with attempt %d and %d history rows, want 0 and 0", j.ID, j.Attempt, len(history(t, q, j.ID)))
		}
	}
	if got := len(listState(t, q, litequeue.Completed)); got != 4+concurrency {
		t.Errorf("%d jobs completed, want %d", got, 4+concurrency)
	}
	if _, most, _ := slow.state(0); most != concurrency {
		t.Errorf("at most %d handlers ran at once, want %d", most, concurrency)
	}
}

// leaseUntil reads a running job's lease expiry.
func leaseUntil(tb testing.TB, q *litequeue.Queue, id int64) time.Time {
	tb.Helper()
	var ms int64
	if err := q.DB().Get(&ms, q.DB().Rebind(`SELECT lease_until FROM litequeue_jobs WHERE id = ?`), id); err != nil {
		tb.Fatal(err)
	}
	return time.UnixMilli(ms)
}
