package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_CancelWaitingToRetry cancels a job between two tries: it is
// cancelled at once, keeps its history (no row for the cancel) and never
// runs again.
func TestQueue_CancelWaitingToRetry(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{
		Clock:   clk,
		Retry:   litequeue.Policy{Base: time.Second, MaxTries: 3},
		OnEvent: ev.record,
	})
	runs := 0
	q.Handle("flaky", func(ctx context.Context, job *litequeue.Job) error {
		runs++
		return errors.New("boom")
	})
	ctx := t.Context()
	job := enqueue(t, q, "flaky", nil)
	runDue(t, q)
	clk.Add(500 * time.Millisecond)
	if err := q.Cancel(ctx, job.ID); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	got := get(t, q, job.ID)
	if got.State != litequeue.Cancelled || !got.FinishedAt.Equal(clk.Now()) || got.LastError != "boom" {
		t.Fatalf("job after Cancel = %+v, want cancelled now, its last error kept", got)
	}
	if h := history(t, q, job.ID); len(h) != 1 || h[0].Outcome != litequeue.OutcomeFailed {
		t.Fatalf("history = %+v, want the one failed run", h)
	}
	clk.Add(time.Hour)
	runDue(t, q)
	if _, ok, err := q.NextDue(ctx); ok || err != nil {
		t.Fatalf("NextDue after Cancel = %v, %v; want nothing due", ok, err)
	}
	if runs != 1 {
		t.Fatalf("the handler ran %d times, want 1", runs)
	}
	if diff := cmp.Diff([]string{"job.enqueued", "job.started", "job.retry", "job.cancelled"}, ev.types()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestQueue_CancelErrors(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("ok", func(ctx context.Context, job *litequeue.Job) error { return nil })
	q.Handle("doomed", doomed)
	ctx := t.Context()
	if err := q.Cancel(ctx, 999); !errors.Is(err, litequeue.ErrNotFound) {
		t.Fatalf("Cancel(999) = %v, want ErrNotFound", err)
	}
	completed := enqueue(t, q, "ok", nil)
	dead := enqueue(t, q, "doomed", nil)
	cancelled := enqueue(t, q, "later", nil)
	runDue(t, q)
	if err := q.Cancel(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	for id, state := range map[int64]string{completed.ID: "completed", dead.ID: "dead", cancelled.ID: "cancelled"} {
		want := "litequeue: cancel job " + itoa(id) + ": it is " + state
		if err := q.Cancel(ctx, id); err == nil || err.Error() != want {
			t.Errorf("Cancel of a %s job = %v, want %q", state, err, want)
		}
	}
}

// TestQueue_CancelRunning cancels, from a second Queue on the same file, a
// job that the first Queue is running: the handler's context is cancelled
// at its next lease renewal and the run is recorded as cancelled, though
// the handler returns nil.
func TestQueue_CancelRunning(t *testing.T) {
	t.Parallel()
	clk := newMock()
	const visibility = 3 * time.Second
	var ev events
	q1, path := openQueue(t, litequeue.Options{Clock: clk, VisibilityTimeout: visibility, OnEvent: ev.record})
	q2 := openAt(t, path, litequeue.Options{Clock: clk, VisibilityTimeout: visibility})
	started := make(chan struct{})
	causes := make(chan error, 1)
	q1.Handle("slow", func(ctx context.Context, job *litequeue.Job) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil
	})
	ctx := t.Context()
	job := enqueue(t, q1, "slow", nil)
	done := runDueAsync(q1)
	<-started
	if err := q2.Cancel(ctx, job.ID); err != nil {
		t.Fatalf("Cancel of a running job: %v", err)
	}
	if got := get(t, q2, job.ID); got.State != litequeue.Running {
		t.Fatalf("state before the renewal = %s, want running", got.State)
	}
	var cause error
	waitFor(t, "the handler's context to be cancelled", func() bool {
		select {
		case cause = <-causes:
			return true
		default:
			clk.Add(visibility / 3) // the next renewal
			return false
		}
	})
	if r := <-done; r.n != 1 || r.err != nil {
		t.Fatalf("RunDue = %d, %v; want 1 run", r.n, r.err)
	}
	if cause == nil || cause.Error() != "litequeue: job cancelled" {
		t.Fatalf("handler's context cause = %v, want the cancel", cause)
	}
	got := get(t, q2, job.ID)
	if got.State != litequeue.Cancelled || got.FinishedAt.Before(epoch.Add(visibility/3)) {
		t.Fatalf("job = %+v, want cancelled after the renewal", got)
	}
	want := []litequeue.Attempt{{Attempt: 1, StartedAt: epoch, FinishedAt: got.FinishedAt,
		Outcome: litequeue.OutcomeCancelled, Worker: workerName(t, q1, job.ID)}}
	if diff := cmp.Diff(want, history(t, q2, job.ID)); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"job.enqueued", "job.started", "job.cancelled"}, ev.types()); diff != "" {
		t.Fatalf("events of the running Queue (-want +got):\n%s", diff)
	}
}

// TestQueue_CancelRunningInProcess cancels a running job from the Queue
// that runs it, under RunDue and under Work: the handler's context is
// cancelled at once, the mock clock standing still, and the run is
// recorded as cancelled.
func TestQueue_CancelRunningInProcess(t *testing.T) {
	t.Parallel()
	for _, runner := range []string{"RunDue", "Work"} {
		t.Run(runner, func(t *testing.T) {
			clk := newMock()
			var ev events
			q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
			started := make(chan struct{})
			causes := make(chan error, 1)
			q.Handle("slow", func(ctx context.Context, job *litequeue.Job) error {
				close(started)
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return nil
			})
			job := enqueue(t, q, "slow", nil)
			var wait func()
			if runner == "RunDue" {
				done := runDueAsync(q)
				wait = func() {
					if r := <-done; r.n != 1 || r.err != nil {
						t.Errorf("RunDue = %d, %v; want 1 run", r.n, r.err)
					}
				}
			} else {
				stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 2})
				wait = func() {
					if err := stop(); err != nil {
						t.Errorf("Work = %v", err)
					}
				}
			}
			defer wait()
			<-started
			if err := q.Cancel(t.Context(), job.ID); err != nil {
				t.Fatalf("Cancel of a running job: %v", err)
			}
			var cause error
			select {
			case cause = <-causes:
			case <-time.After(10 * time.Second):
				// Free the handler through the renewal, so the test ends.
				waitFor(t, "the next renewal", func() bool {
					select {
					case cause = <-causes:
						return true
					default:
						clk.Add(time.Second)
						return false
					}
				})
				t.Fatalf("the handler's context was cancelled only at the lease renewal")
			}
			if cause == nil || cause.Error() != "litequeue: job cancelled" {
				t.Fatalf("handler's context cause = %v, want the cancel", cause)
			}
			waitFor(t, "the run to be recorded", func() bool { return get(t, q, job.ID).State != litequeue.Running })
			got := get(t, q, job.ID)
			if got.State != litequeue.Cancelled || !got.FinishedAt.Equal(epoch) {
				t.Fatalf("job = %+v, want cancelled at %v", got, epoch)
			}
			want := []litequeue.Attempt{{Attempt: 1, StartedAt: epoch, FinishedAt: epoch,
				Outcome: litequeue.OutcomeCancelled, Worker: workerName(t, q, job.ID)}}
			if diff := cmp.Diff(want, history(t, q, job.ID)); diff != "" {
				t.Fatalf("history (-want +got):\n%s", diff)
			}
			// The event fires after the run's commit, which the state shows.
			waitFor(t, "the cancelled event", func() bool { return ev.count("job.cancelled") > 0 })
			if diff := cmp.Diff([]string{"job.enqueued", "job.started", "job.cancelled"}, ev.types()); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueue_CancelRunningBeforeRenewal cancels a running job whose handler
// then returns nil before any lease renewal saw the request: the run is
// still recorded as cancelled, as Cancel promised, not completed.
func TestQueue_CancelRunningBeforeRenewal(t *testing.T) {
	t.Parallel()
	var ev events
	q1, path := openQueue(t, litequeue.Options{OnEvent: ev.record})
	q2 := openAt(t, path, litequeue.Options{})
	g := newGate()
	q1.Handle("slow", g.handle)
	job := enqueue(t, q1, "slow", nil)
	done := runDueAsync(q1)
	<-g.started
	if err := q2.Cancel(t.Context(), job.ID); err != nil {
		t.Fatalf("Cancel of a running job: %v", err)
	}
	close(g.release)
	if r := <-done; r.n != 1 || r.err != nil {
		t.Fatalf("RunDue = %d, %v; want 1 run", r.n, r.err)
	}
	cancelledOnce(t, q1, job.ID)
	if diff := cmp.Diff([]string{"job.enqueued", "job.started", "job.cancelled"}, ev.types()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

// cancelledOnce fails the test unless the job is cancelled and its history
// holds one run, recorded cancelled.
func cancelledOnce(tb testing.TB, q *litequeue.Queue, id int64) {
	tb.Helper()
	if got := get(tb, q, id); got.State != litequeue.Cancelled {
		tb.Fatalf("state = %s, want cancelled", got.State)
	}
	if h := history(tb, q, id); len(h) != 1 || h[0].Outcome != litequeue.OutcomeCancelled {
		tb.Fatalf("history = %+v, want one cancelled run", h)
	}
}
