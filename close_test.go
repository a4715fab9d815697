package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// closeAsync calls Close on a goroutine of its own and closes the
// returned channel when Close returns, once the test has read its error
// from *err.
func closeAsync(q *litequeue.Queue, err *error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		*err = q.Close()
		close(done)
	}()
	return done
}

// waitClosing waits until Close has begun: the Queue refuses new calls.
func waitClosing(tb testing.TB, q *litequeue.Queue) {
	tb.Helper()
	waitFor(tb, "Close to begin", func() bool {
		_, _, err := q.NextDue(context.Background())
		return errors.Is(err, litequeue.ErrClosed)
	})
}

// TestQueue_CloseStopsRunDue closes the Queue while RunDue runs the first
// of three due jobs: RunDue claims no other, returns ErrClosed with its one
// run once the handler returns, and Close returns then.
func TestQueue_CloseStopsRunDue(t *testing.T) {
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	g := newGate()
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if job.ID == 1 {
			return g.handle(ctx, job)
		}
		return nil
	})
	for range 3 {
		enqueue(t, q, "k", nil)
	}
	done := runDueAsync(q)
	<-g.started
	var closeErr error
	closed := closeAsync(q, &closeErr)
	waitClosing(t, q)
	close(g.release)
	if r := <-done; r.n != 1 || !errors.Is(r.err, litequeue.ErrClosed) {
		t.Fatalf("RunDue = %d, %v; want 1 run, ErrClosed", r.n, r.err)
	}
	<-closed
	if closeErr != nil {
		t.Fatalf("Close: %v", closeErr)
	}
	after := openAt(t, path, litequeue.Options{})
	for id, want := range map[int64]litequeue.State{1: litequeue.Completed, 2: litequeue.Pending, 3: litequeue.Pending} {
		if got := get(t, after, id).State; got != want {
			t.Errorf("job %d: %s, want %s", id, got, want)
		}
	}
}

// TestQueue_CloseCancelsRunDue closes the Queue while RunDue runs a
// handler that waits for its context: after DefaultShutdownGrace on the
// mock clock the context is cancelled and the job, whose handler returned,
// is released without using a try. A handler that ignores the cancel is
// abandoned after a further 5s, and its job stays leased until its lease
// expires. Either way Close returns.
func TestQueue_CloseCancelsRunDue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		returns     bool // whether the handler returns once its context is cancelled
		want        litequeue.State
		wantAttempt int
	}{
		{"handler returns", true, litequeue.Pending, 0},
		{"handler ignores the cancel", false, litequeue.Running, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q, path := openQueue(t, litequeue.Options{Clock: clk})
			started, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
			defer close(release)
			q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				close(started)
				<-ctx.Done()
				close(cancelled)
				if !tc.returns {
					<-release
				}
				return ctx.Err()
			})
			job := enqueue(t, q, "k", nil)
			done := runDueAsync(q)
			<-started
			var closeErr error
			closed := closeAsync(q, &closeErr)
			waitClosing(t, q)
			stepUntilClosed(t, clk, "the grace to run out", cancelled, time.Second)
			if got := clk.Now().Sub(epoch); got < litequeue.DefaultShutdownGrace {
				t.Fatalf("the handler's context was cancelled %v after Close, before the grace of %v", got, litequeue.DefaultShutdownGrace)
			}
			stepUntilClosed(t, clk, "Close to return", closed, time.Second)
			if closeErr != nil {
				t.Fatalf("Close: %v", closeErr)
			}
			if r := <-done; r.n != 1 || !errors.Is(r.err, litequeue.ErrClosed) {
				t.Fatalf("RunDue = %d, %v; want 1 run, ErrClosed", r.n, r.err)
			}
			after := openAt(t, path, litequeue.Options{Clock: clk})
			if got := get(t, after, job.ID); got.State != tc.want || got.Attempt != tc.wantAttempt {
				t.Fatalf("job: %s attempt %d, want %s attempt %d", got.State, got.Attempt, tc.want, tc.wantAttempt)
			}
			if h := history(t, after, job.ID); len(h) != 0 {
				t.Fatalf("history = %+v, want none", h)
			}
		})
	}
}

// TestQueue_CloseFromHandler calls Close from inside a handler, under
// RunDue and under Work: Close cannot wait for the handler that called it,
// so it abandons that run after the grace and the further wait, as a
// shutdown does, and returns; it does not deadlock.
func TestQueue_CloseFromHandler(t *testing.T) {
	t.Parallel()
	for _, under := range []string{"RunDue", "Work"} {
		t.Run(under, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q, _ := openQueue(t, litequeue.Options{Clock: clk})
			closed := make(chan struct{})
			var closeErr error
			q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				closeErr = q.Close()
				close(closed)
				return nil
			})
			enqueue(t, q, "k", nil)
			if under == "RunDue" {
				done := runDueAsync(q)
				stepUntilClosed(t, clk, "Close to return", closed, time.Second)
				if r := <-done; r.n != 1 || !errors.Is(r.err, litequeue.ErrClosed) {
					t.Errorf("RunDue = %d, %v; want 1 run, ErrClosed", r.n, r.err)
				}
			} else {
				done := make(chan error, 1)
				go func() { done <- q.Work(context.Background(), litequeue.WorkerOptions{}) }()
				stepUntilClosed(t, clk, "Close to return", closed, time.Second)
				if err := <-done; err != nil {
					t.Errorf("Work = %v, want nil", err)
				}
			}
			if closeErr != nil {
				t.Fatalf("Close from a handler: %v", closeErr)
			}
		})
	}
}
