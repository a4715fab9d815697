package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_CompleteTx commits the app's write, a key and the completion
// at once; the run is recorded once, as completed, whatever the handler
// returns after the commit.
func TestQueue_CompleteTx(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		after   error // what the handler returns after the commit
		wantErr string
	}{
		{"returns nil", nil, ""},
		{"returns an error", errors.New("late"), "late"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ev events
			q, _ := openOrders(t, litequeue.Options{OnEvent: ev.record})
			q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
				if err := placeOrder(ctx, q, job); err != nil {
					return err
				}
				return tc.after
			})
			job := enqueue(t, q, "order", nil)
			if n := runDue(t, q); n != 1 {
				t.Fatalf("RunDue ran %d jobs, want 1", n)
			}
			if n := orders(t, q, job.ID); n != 1 {
				t.Fatalf("%d app rows, want 1", n)
			}
			if !seen(t, q, "order-for-job-"+itoa(job.ID)) {
				t.Fatalf("key marked in the transaction not seen")
			}
			got := get(t, q, job.ID)
			if got.State != litequeue.Completed || !got.RunAt.IsZero() || got.LastError != "" || !got.FinishedAt.Equal(epoch) {
				t.Fatalf("job = %+v, want completed at epoch with its retry fields cleared", got)
			}
			want := []litequeue.Attempt{{Attempt: 1, StartedAt: epoch, FinishedAt: epoch,
				Outcome: litequeue.OutcomeCompleted, Error: tc.wantErr, Worker: workerName(t, q, job.ID)}}
			if tc.after != nil {
				want[0].ErrorClass = "*errors.errorString"
			}
			if diff := cmp.Diff(want, history(t, q, job.ID)); diff != "" {
				t.Fatalf("history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"job.enqueued", "job.started", "job.completed"}, ev.types()); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueue_CompleteTxRolledBack checks that nothing trusts a CompleteTx
// whose transaction was rolled back: the run ends as the handler says.
func TestQueue_CompleteTxRolledBack(t *testing.T) {
	t.Parallel()
	q, _ := openOrders(t, litequeue.Options{Retry: litequeue.Policy{MaxTries: 2}})
	q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		tx, err := q.DB().BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		if err := q.CompleteTx(ctx, tx, job); err != nil {
			return err
		}
		tx.Rollback()
		return errors.New("payment refused")
	})
	job := enqueue(t, q, "order", nil)
	runDue(t, q)
	if got := get(t, q, job.ID); got.State != litequeue.Pending || got.LastError != "payment refused" {
		t.Fatalf("job = %+v, want pending with the handler's error", got)
	}
}

// TestQueue_CompleteTxStale runs a handler past its timeout: the run is
// recorded timed_out, and the stale handler's CompleteTx returns
// ErrLeaseLost, so the app's write is rolled back. The retry completes.
func TestQueue_CompleteTxStale(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openOrders(t, litequeue.Options{
		Clock: clk,
		Retry: litequeue.Policy{Base: time.Hour, Ceiling: time.Hour, MaxTries: 3},
	})
	g := newGate()
	results := make(chan error, 2)
	q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		if job.Attempt == 1 {
			g.handle(ctx, job) // past the timeout, and the context's cancellation
		}
		err := placeOrder(context.WithoutCancel(ctx), q, job)
		results <- err
		return err
	}, litequeue.WithTimeout(5*time.Second))
	job := enqueue(t, q, "order", nil)

	done := runDueAsync(q)
	<-g.started
	waitFor(t, "the run to time out", func() bool {
		select {
		case r := <-done:
			if r.n != 1 || r.err != nil {
				t.Errorf("RunDue = %d, %v; want 1 run", r.n, r.err)
			}
			return true
		default:
			clk.Add(time.Second) // the timeout timer may not exist yet
			return false
		}
	})
	close(g.release)
	if err := <-results; !errors.Is(err, litequeue.ErrLeaseLost) {
		t.Fatalf("stale CompleteTx = %v, want ErrLeaseLost", err)
	}
	if n := orders(t, q, job.ID); n != 0 {
		t.Fatalf("stale handler's write committed: %d app rows", n)
	}
	if got := get(t, q, job.ID); got.State != litequeue.Pending || got.Attempt != 1 {
		t.Fatalf("job after the timeout = %+v, want pending after attempt 1", got)
	}

	next, _, err := q.NextDue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(next)
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue of the retry ran %d jobs, want 1", n)
	}
	if err := <-results; err != nil {
		t.Fatalf("CompleteTx of the retry: %v", err)
	}
	if diff := cmp.Diff([]litequeue.Outcome{litequeue.OutcomeTimedOut, litequeue.OutcomeCompleted}, outcomes(history(t, q, job.ID))); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	var attempt int
	if err := q.DB().Get(&attempt, q.DB().Rebind(`SELECT attempt FROM app_orders WHERE job_id = ?`), job.ID); err != nil || attempt != 2 {
		t.Fatalf("app row: attempt %d, %v; want the retry's, 2", attempt, err)
	}
}

// TestQueue_CompleteTxCancelled checks that a job whose cancellation was
// requested while it ran cannot be completed by CompleteTx: the app's write
// rolls back and the run is recorded as cancelled. The request comes from
// another Queue, so no renewal has shown it to the handler yet.
func TestQueue_CompleteTxCancelled(t *testing.T) {
	t.Parallel()
	q, path := openOrders(t, litequeue.Options{})
	other := openAt(t, path, litequeue.Options{})
	g := newGate()
	results := make(chan error, 1)
	q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		g.handle(ctx, job)
		err := placeOrder(ctx, q, job)
		results <- err
		return err
	})
	job := enqueue(t, q, "order", nil)
	done := runDueAsync(q)
	<-g.started
	if err := other.Cancel(t.Context(), job.ID); err != nil {
		t.Fatalf("Cancel of a running job: %v", err)
	}
	close(g.release)
	if r := <-done; r.n != 1 || r.err != nil {
		t.Fatalf("RunDue = %d, %v; want 1 run", r.n, r.err)
	}
	if err := <-results; !errors.Is(err, litequeue.ErrLeaseLost) {
		t.Fatalf("CompleteTx after Cancel = %v, want ErrLeaseLost", err)
	}
	if n := orders(t, q, job.ID); n != 0 {
		t.Fatalf("cancelled job's write committed: %d app rows", n)
	}
	cancelledOnce(t, q, job.ID)
}

// TestQueue_CompleteTxThenShutdown commits CompleteTx and then waits out
// Work's shutdown grace: the handler's return after the cancel would
// release the job, but its completion stands.
func TestQueue_CompleteTxThenShutdown(t *testing.T) {
	t.Parallel()
	clk := newTimerClock()
	q, _ := openOrders(t, litequeue.Options{Clock: clk})
	committed, stopped := make(chan error, 1), make(chan struct{})
	q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		committed <- placeOrder(ctx, q, job)
		<-ctx.Done()
		close(stopped)
		return nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, litequeue.WorkerOptions{ShutdownGrace: 10 * time.Second}) }()
	job := enqueue(t, q, "order", nil)
	if err := <-committed; err != nil {
		t.Fatalf("CompleteTx: %v", err)
	}
	from := clk.mark()
	cancel()
	runOut(t, clk, from, 10*time.Second)
	waitClosed(t, "the grace to run out", stopped)
	if err := <-done; err != nil {
		t.Fatalf("Work returned %v", err)
	}
	if got := get(t, q, job.ID); got.State != litequeue.Completed || orders(t, q, job.ID) != 1 {
		t.Fatalf("job %+v with %d orders, want completed with 1", got, orders(t, q, job.ID))
	}
	if h := history(t, q, job.ID); len(h) != 1 || h[0].Outcome != litequeue.OutcomeCompleted {
		t.Fatalf("history = %+v, want one completed row", h)
	}
}

// TestQueue_CompleteTxKeepsContext commits CompleteTx and then keeps the
// handler busy through several lease renewals, under RunDue and under
// Work: the handler's context stays alive until the handler returns, so its
// follow-up work on ctx succeeds, and the run is recorded once, completed.
// It runs in a synctest bubble, whose fake time the real clock reads: the
// renewals, every third of VisibilityTimeout, all happen while the handler
// waits two VisibilityTimeouts.
func TestQueue_CompleteTxKeepsContext(t *testing.T) {
	fileOnly(t, "a synctest bubble cannot wait on a server's connections")
	t.Parallel()
	for _, under := range []string{"RunDue", "Work"} {
		t.Run(under, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { testCompleteTxKeepsContext(t, under) })
		})
	}
}

func testCompleteTxKeepsContext(t *testing.T, under string) {
	q, _ := openOrders(t, litequeue.Options{Clock: clock.New()})
	after := make(chan error, 1) // the follow-up work's error
	q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		if err := placeOrder(ctx, q, job); err != nil {
			after <- err
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * litequeue.DefaultVisibilityTimeout):
		}
		_, err := q.DB().ExecContext(ctx, q.DB().Rebind(`INSERT INTO app_orders (job_id, attempt) VALUES (?, ?)`), job.ID, job.Attempt)
		after <- err
		return nil
	})
	job := enqueue(t, q, "order", nil)
	if under == "RunDue" {
		if n := runDue(t, q); n != 1 {
			t.Fatalf("RunDue ran %d jobs, want 1", n)
		}
	} else {
		stop := startWork(t, q, litequeue.WorkerOptions{})
		defer func() {
			if err := stop(); err != nil {
				t.Errorf("Work returned %v", err)
			}
		}()
	}
	if err := <-after; err != nil {
		t.Fatalf("follow-up work on ctx after CompleteTx: %v", err)
	}
	synctest.Wait() // the run is recorded
	if got := get(t, q, job.ID); got.State != litequeue.Completed || orders(t, q, job.ID) != 2 {
		t.Fatalf("job %s with %d orders, want completed with 2", got.State, orders(t, q, job.ID))
	}
	if diff := cmp.Diff([]litequeue.Outcome{litequeue.OutcomeCompleted}, outcomes(history(t, q, job.ID))); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
}
