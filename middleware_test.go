package litequeue_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// trail records what middleware and handlers do, in order.
type trail struct {
	mu    sync.Mutex
	steps []string
}

func (tr *trail) add(step string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.steps = append(tr.steps, step)
}

func (tr *trail) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.steps)
}

// named returns a middleware that records the run's start and end under
// name.
func (tr *trail) named(name string) func(litequeue.Handler) litequeue.Handler {
	return func(next litequeue.Handler) litequeue.Handler {
		return func(ctx context.Context, job *litequeue.Job) error {
			tr.add(name + ">")
			err := next(ctx, job)
			tr.add("<" + name)
			return err
		}
	}
}

// TestQueue_UseOrder composes Use's middleware outside WithMiddleware's,
// the first given outermost, and applies a Use made after Handle to the
// handler registered before it, from its next run on.
func TestQueue_UseOrder(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var tr trail
	q.Use(tr.named("a"), tr.named("b"))
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		tr.add("h")
		return nil
	}, litequeue.WithMiddleware(tr.named("d"), tr.named("e")))
	enqueue(t, q, "k", nil)
	runDue(t, q)
	want := []string{"a>", "b>", "d>", "e>", "h", "<e", "<d", "<b", "<a"}
	if diff := cmp.Diff(want, tr.get()); diff != "" {
		t.Errorf("first run (-want +got):\n%s", diff)
	}
	q.Use(tr.named("c"))
	enqueue(t, q, "k", nil)
	runDue(t, q)
	want = append(want, "a>", "b>", "c>", "d>", "e>", "h", "<e", "<d", "<c", "<b", "<a")
	if diff := cmp.Diff(want, tr.get()); diff != "" {
		t.Errorf("after Use(c) (-want +got):\n%s", diff)
	}
}

// ctxKey is a context key of the tests.
type ctxKey struct{}

// TestQueue_UseSeesTheRun gives a middleware the run's ctx and job and
// what the handler returns; the ctx it passes on reaches the handler, and
// the run records what it returns.
func TestQueue_UseSeesTheRun(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	errTry := errors.New("try later")
	var saw struct {
		deadline bool
		attempt  int
		user     string
		err      error
	}
	q.Use(func(next litequeue.Handler) litequeue.Handler {
		return func(ctx context.Context, job *litequeue.Job) error {
			_, saw.deadline = ctx.Deadline()
			saw.attempt, saw.user = job.Attempt, job.Metadata["user"]
			saw.err = next(context.WithValue(ctx, ctxKey{}, "from the middleware"), job)
			if job.Kind == "forgiven" {
				return nil
			}
			return saw.err
		}
	})
	var value any
	handler := func(ctx context.Context, job *litequeue.Job) error {
		value = ctx.Value(ctxKey{})
		return errTry
	}
	q.Handle("k", handler, litequeue.WithTimeout(time.Minute))
	q.Handle("forgiven", handler)
	j := enqueue(t, q, "k", nil, litequeue.Metadata("user", "ada"))
	runDue(t, q)
	if !saw.deadline || saw.attempt != 1 || saw.user != "ada" || saw.err != errTry {
		t.Errorf("the middleware saw %+v, want the timeout's deadline, attempt 1, user ada and %v", saw, errTry)
	}
	if value != "from the middleware" {
		t.Errorf("the handler's ctx holds %v, want the middleware's value", value)
	}
	if got := outcomes(history(t, q, j.ID)); !slices.Equal(got, []litequeue.Outcome{litequeue.OutcomeFailed}) {
		t.Errorf("outcomes %v, want failed", got)
	}
	forgiven := enqueue(t, q, "forgiven", nil)
	runDue(t, q)
	if got := get(t, q, forgiven.ID).State; got != litequeue.Completed {
		t.Errorf("a run whose middleware returned nil: %s, want completed", got)
	}
}

// TestQueue_UsePanic passes a handler's panic up through the middleware,
// whose deferred calls see it; the run is recorded as panicked.
func TestQueue_UsePanic(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var recovered any
	q.Use(func(next litequeue.Handler) litequeue.Handler {
		return func(ctx context.Context, job *litequeue.Job) error {
			defer func() {
				recovered = recover()
				panic(recovered)
			}()
			return next(ctx, job)
		}
	})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { panic("boom") })
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	if recovered != "boom" {
		t.Errorf("the middleware recovered %v, want boom", recovered)
	}
	panickedOnce(t, q, j.ID, "boom")
}

// TestQueue_UsePanicsApplying gives Use a middleware that panics when it
// is applied, not when it runs: the run is recorded as panicked, as a
// handler's panic is, and the caller of RunDue goes on.
func TestQueue_UsePanicsApplying(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("k", ok)
	q.Use(func(litequeue.Handler) litequeue.Handler { panic("bad middleware") })
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	panickedOnce(t, q, j.ID, "bad middleware")
}

// TestQueue_UseAppliedOnce starts 8 runs of a handler at once, the first
// since a Use: its middleware is applied to the handler once. Applying it
// waits a moment (up to 200ms) for another run to apply it as well, which
// a run that does not wait for the first to finish would.
func TestQueue_UseAppliedOnce(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(8)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		started.Done()
		<-release
		return nil
	})
	var applied atomic.Int32
	q.Use(func(next litequeue.Handler) litequeue.Handler {
		applied.Add(1)
		for deadline := time.Now().Add(200 * time.Millisecond); applied.Load() == 1 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return next
	})
	if _, err := q.EnqueueMany(t.Context(), "k", make([]any, 8)); err != nil {
		t.Fatal(err)
	}
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 8})
	defer stop()
	started.Wait()
	close(release)
	if got := applied.Load(); got != 1 {
		t.Errorf("the middleware was applied %d times, want once", got)
	}
}

// TestQueue_UseWhileWorking calls Use while Work runs jobs on several
// goroutines: the runs after it go through the new middleware.
func TestQueue_UseWhileWorking(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Clock: newMock()})
	var runs, wrapped atomic.Int32
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		runs.Add(1)
		return nil
	})
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 4})
	defer stop()
	if _, err := q.EnqueueMany(t.Context(), "k", make([]any, 20)); err != nil {
		t.Fatal(err)
	}
	q.Use(func(next litequeue.Handler) litequeue.Handler {
		return func(ctx context.Context, job *litequeue.Job) error {
			wrapped.Add(1)
			return next(ctx, job)
		}
	})
	waitWithin(t, 10*time.Second, "the first 20 runs", func() bool { return runs.Load() == 20 })
	before := wrapped.Load()
	if _, err := q.EnqueueMany(t.Context(), "k", make([]any, 20)); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 10*time.Second, "20 more runs", func() bool { return runs.Load() == 40 })
	if got := wrapped.Load() - before; got != 20 {
		t.Errorf("the middleware saw %d of the 20 runs after Use", got)
	}
}

// TestQueue_UseNil panics on a nil middleware, in Use and in
// WithMiddleware.
func TestQueue_UseNil(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for name, call := range map[string]func(){
		"Use":            func() { q.Use(nil) },
		"WithMiddleware": func() { litequeue.WithMiddleware(nil) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "nil middleware") {
					t.Errorf("%s(nil): recovered %v, want a panic about a nil middleware", name, r)
				}
			}()
			call()
		}()
	}
}

// TestResultOutcome_Names names what a middleware sees of a run's end.
func TestResultOutcome_Names(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var got []litequeue.Outcome
	q.Use(func(next litequeue.Handler) litequeue.Handler {
		return func(ctx context.Context, job *litequeue.Job) error {
			err := next(ctx, job)
			got = append(got, litequeue.ResultOutcome(ctx, err))
			return err
		}
	})
	results := map[string]error{
		"ok": nil, "fail": errors.New("no"), "perm": litequeue.Permanent(errors.New("never")),
		"snooze": litequeue.Snooze(time.Hour), "discard": litequeue.ErrDiscard,
		"cancel": litequeue.CancelJob(errors.New("stop")),
	}
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		var name string
		job.Decode(&name)
		return results[name]
	})
	for _, name := range []string{"ok", "fail", "perm", "snooze", "discard", "cancel"} {
		enqueue(t, q, "k", name)
		runDue(t, q)
	}
	want := []litequeue.Outcome{litequeue.OutcomeCompleted, litequeue.OutcomeFailed, litequeue.OutcomeFailed,
		litequeue.OutcomeSnoozed, litequeue.OutcomeDiscarded, litequeue.OutcomeCancelled}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// panickedOnce fails the test unless the job's history is one panicked
// run whose error holds value.
func panickedOnce(tb testing.TB, q *litequeue.Queue, id int64, value string) {
	tb.Helper()
	h := history(tb, q, id)
	if len(h) != 1 || h[0].Outcome != litequeue.OutcomePanicked || !strings.Contains(h[0].Error, value) {
		tb.Errorf("history %+v, want one panicked run with %q", h, value)
	}
}
