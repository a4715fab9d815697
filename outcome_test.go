package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// fixedPolicy waits exactly 10s before every retry, 3 tries.
var fixedPolicy = litequeue.Policy{Backoff: litequeue.Constant, Base: 10 * time.Second, Ceiling: time.Minute, MaxTries: 3, Jitter: litequeue.NoJitter}

type customError struct{ msg string }

func (e *customError) Error() string { return e.msg }

// TestQueue_Outcomes runs one job per kind of handler ending through one
// RunDue and checks the job and the history row each leaves.
func TestQueue_Outcomes(t *testing.T) {
	tests := []struct {
		name      string
		ret       error
		state     litequeue.State
		outcome   litequeue.Outcome
		class     string
		delay     time.Duration
		attempt   int // after the run
		lastError string
		event     string
	}{
		{"nil completes", nil, litequeue.Completed, litequeue.OutcomeCompleted, "", 0, 1, "", "job.completed"},
		{"error retries after the policy's delay", errors.New("down"), litequeue.Pending, litequeue.OutcomeFailed, "*errors.errorString", 10 * time.Second, 1, "down", "job.retry"},
		{"wrapped error names the innermost type", fmt.Errorf("call: %w", &customError{"refused"}), litequeue.Pending, litequeue.OutcomeFailed, "*litequeue_test.customError", 10 * time.Second, 1, "call: refused", "job.retry"},
		{"RetryAfter sets the delay exactly", litequeue.RetryAfter(1234567*time.Microsecond, errors.New("429")), litequeue.Pending, litequeue.OutcomeFailed, "*errors.errorString", 1234 * time.Millisecond, 1, "429", "job.retry"},
		{"RetryAfter is clamped to 24h", litequeue.RetryAfter(48*time.Hour, errors.New("later")), litequeue.Pending, litequeue.OutcomeFailed, "*errors.errorString", 24 * time.Hour, 1, "later", "job.retry"},
		{"Permanent goes to dead at once", litequeue.Permanent(errors.New("bad input")), litequeue.Dead, litequeue.OutcomeFailed, "*errors.errorString", 0, 1, "bad input", "job.dead"},
		{"ErrDiscard discards", fmt.Errorf("account gone: %w", litequeue.ErrDiscard), litequeue.Discarded, litequeue.OutcomeDiscarded, "*errors.errorString", 0, 1, "", "job.discarded"},
		{"Snooze uses no try", litequeue.Snooze(5 * time.Minute), litequeue.Pending, litequeue.OutcomeSnoozed, "", 5 * time.Minute, 0, "", "job.snoozed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			var ev events
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy, OnEvent: ev.record})
			q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				clk.Add(1500 * time.Millisecond) // the run takes 1.5s
				return tt.ret
			})
			job := enqueue(t, q, "k", nil)
			if got := runDue(t, q); got != 1 {
				t.Fatalf("RunDue ran %d, want 1", got)
			}
			end := epoch.Add(1500 * time.Millisecond)
			got := get(t, q, job.ID)
			if got.State != tt.state || got.Attempt != tt.attempt || got.LastError != tt.lastError {
				t.Errorf("job: state %s attempt %d last error %q, want %s %d %q", got.State, got.Attempt, got.LastError, tt.state, tt.attempt, tt.lastError)
			}
			switch {
			case tt.state == litequeue.Pending:
				if want := end.Add(tt.delay); !got.RunAt.Equal(want) {
					t.Errorf("RunAt = %v, want %v (end of run + delay)", got.RunAt, want)
				}
			case tt.state == litequeue.Completed:
				if !got.RunAt.IsZero() {
					t.Errorf("completed job has RunAt %v, want zero", got.RunAt)
				}
				fallthrough
			default:
				if !got.FinishedAt.Equal(end) {
					t.Errorf("FinishedAt = %v, want %v", got.FinishedAt, end)
				}
			}
			h := history(t, q, job.ID)
			if len(h) != 1 {
				t.Fatalf("history has %d rows, want 1: %+v", len(h), h)
			}
			want := litequeue.Attempt{
				Attempt: 1, StartedAt: epoch, FinishedAt: end, Outcome: tt.outcome,
				Error: errText(tt.ret, tt.outcome), ErrorClass: tt.class, Delay: tt.delay, Worker: h[0].Worker,
			}
			if diff := cmp.Diff(want, h[0]); diff != "" {
				t.Errorf("history row (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"job.enqueued", "job.started", tt.event}, ev.types()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func errText(err error, o litequeue.Outcome) string {
	if err == nil || o == litequeue.OutcomeSnoozed {
		return ""
	}
	return err.Error()
}

// TestQueue_SnoozeKeepsAttempt checks that the run after a snooze carries
// the same Attempt number and that snoozes never make a job dead.
func TestQueue_SnoozeKeepsAttempt(t *testing.T) {
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: litequeue.Policy{MaxTries: 1}})
	var attempts []int
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		attempts = append(attempts, job.Attempt)
		if len(attempts) < 4 {
			return litequeue.Snooze(time.Second)
		}
		return nil
	})
	job := enqueue(t, q, "k", nil)
	for range 4 {
		runDue(t, q)
		clk.Add(time.Second)
	}
	if diff := cmp.Diff([]int{1, 1, 1, 1}, attempts); diff != "" {
		t.Fatalf("attempts (-want +got):\n%s", diff)
	}
	if got := get(t, q, job.ID).State; got != litequeue.Completed {
		t.Fatalf("state = %s, want completed", got)
	}
}

// TestQueue_Panic records a panicking handler as panicked, with the stack,
// and retries it.
func TestQueue_Panic(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{Retry: fixedPolicy})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		var none []int
		return fmt.Errorf("unreachable: %d", none[job.Attempt]) // index out of range
	})
	job := enqueue(t, q, "k", nil)
	runDue(t, q)
	h := history(t, q, job.ID)
	if len(h) != 1 || h[0].Outcome != litequeue.OutcomePanicked || h[0].Delay != 10*time.Second {
		t.Fatalf("history = %+v, want one panicked row with a 10s delay", h)
	}
	if !strings.Contains(h[0].Error, "index out of range [1] with length 0") || !strings.Contains(h[0].Error, "outcome_test.go") {
		t.Errorf("error %q lacks the panic value or the stack", h[0].Error)
	}
	if h[0].ErrorClass != "runtime.boundsError" {
		t.Errorf("error class %q, want runtime.boundsError", h[0].ErrorClass)
	}
	if got := get(t, q, job.ID).State; got != litequeue.Pending {
		t.Fatalf("state = %s, want pending (retry)", got)
	}
}

// TestQueue_PanicWithError panics with a wrapped error: the ErrorClass is
// that of the innermost error, as for one returned.
func TestQueue_PanicWithError(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{Retry: fixedPolicy})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		panic(fmt.Errorf("fetch: %w", &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}))
	})
	job := enqueue(t, q, "k", nil)
	runDue(t, q)
	if h := history(t, q, job.ID); len(h) != 1 || h[0].ErrorClass != "*errors.errorString" {
		t.Fatalf("history = %+v, want one row of class *errors.errorString (fs.ErrNotExist)", h)
	}
}

// TestQueue_Timeout runs a handler that ignores its context past its
// timeout on the mock clock: the run is timed_out at once, RunDue returns,
// and the handler's late success changes nothing.
func TestQueue_Timeout(t *testing.T) {
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	g := newGate()
	returned := make(chan error, 1)
	var sawCancel bool
	q.Handle("slow", func(ctx context.Context, job *litequeue.Job) error {
		g.handle(ctx, job)
		sawCancel = ctx.Err() != nil
		returned <- nil
		return nil
	}, litequeue.WithTimeout(time.Minute))
	job := enqueue(t, q, "slow", nil)

	done := runDueAsync(q)
	<-g.started
	clk.Add(59 * time.Second)
	select {
	case <-done:
		t.Fatal("RunDue returned before the timeout")
	default:
	}
	clk.Add(time.Second)
	if r := <-done; r.n != 1 || r.err != nil {
		t.Fatalf("RunDue = %d, %v; want 1 run (a timed-out run counts)", r.n, r.err)
	}
	close(g.release)
	<-returned
	if !sawCancel {
		t.Error("the handler's context was not cancelled at the timeout")
	}
	got := get(t, q, job.ID)
	h := history(t, q, job.ID)
	if got.State != litequeue.Pending || len(h) != 1 || h[0].Outcome != litequeue.OutcomeTimedOut ||
		!h[0].FinishedAt.Equal(epoch.Add(time.Minute)) || h[0].Delay != 10*time.Second {
		t.Fatalf("job %s, history %+v; want pending after one timed_out row at +1m with a 10s delay", got.State, h)
	}
	if !got.RunAt.Equal(epoch.Add(70 * time.Second)) {
		t.Fatalf("RunAt = %v, want end of timeout + 10s", got.RunAt)
	}
}

// TestQueue_JSONBadPayload sends a payload that does not decode to dead at
// once, with the decode error in the history.
func TestQueue_JSONBadPayload(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{})
	called := false
	q.Handle("email", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, args struct{ To string }) error {
		called = true
		return nil
	}))
	job := enqueue(t, q, "email", []byte(`{"To": 42}`))
	good := enqueue(t, q, "email", map[string]string{"To": "a@b.c"})
	runDue(t, q)
	if got := get(t, q, job.ID); got.State != litequeue.Dead || got.Attempt != 1 {
		t.Fatalf("bad payload: state %s attempt %d, want dead after 1", got.State, got.Attempt)
	}
	if h := history(t, q, job.ID); !strings.Contains(h[0].Error, "cannot unmarshal") {
		t.Errorf("history error %q lacks the decode error", h[0].Error)
	}
	if got := get(t, q, good.ID).State; got != litequeue.Completed || !called {
		t.Fatalf("good payload: state %s, called %v", got, called)
	}
}
