package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_CancelTallied cancels what a person confirmed: the pending
// jobs of the filter that TallyCancel counted, none enqueued since with a
// higher ID, and nothing when those up to its highest ID are no longer as
// many.
func TestQueue_CancelTallied(t *testing.T) {
	t.Parallel()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record})
	ctx := t.Context()
	f := litequeue.Filter{State: litequeue.Pending, Kind: "report", ErrorContains: ""}
	a := enqueue(t, q, "report", nil)
	other := enqueue(t, q, "email", nil)
	b := enqueue(t, q, "report", nil, litequeue.Delay(time.Hour))
	tally, err := q.TallyCancel(ctx, f)
	if diff := cmp.Diff(litequeue.Tally{Jobs: 2, MaxID: b.ID}, tally); err != nil || diff != "" {
		t.Fatalf("TallyCancel: %v, (-want +got):\n%s", err, diff)
	}

	// One of those counted is cancelled meanwhile: nothing is cancelled.
	if err := q.Cancel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	n, err := q.CancelTallied(ctx, f, tally)
	var te *litequeue.TallyError
	if n != 0 || !errors.As(err, &te) || te.Want != 2 || te.Got != 1 {
		t.Fatalf("CancelTallied after a cancel = %d, %v; want 0 and a TallyError of 2 wanted, 1 got", n, err)
	}
	if got := get(t, q, b.ID).State; got != litequeue.Pending {
		t.Fatalf("job %d is %s after a refused CancelTallied, want pending", b.ID, got)
	}

	// Counted again, then a job is enqueued above the highest ID counted:
	// the one counted is cancelled, and only it.
	tally, err = q.TallyCancel(ctx, f)
	if err != nil || tally.Jobs != 1 {
		t.Fatalf("TallyCancel again = %+v, %v; want 1 job", tally, err)
	}
	c := enqueue(t, q, "report", nil)
	if n, err := q.CancelTallied(ctx, f, tally); n != 1 || err != nil {
		t.Fatalf("CancelTallied = %d, %v; want the 1 counted", n, err)
	}
	for id, want := range map[int64]litequeue.State{b.ID: litequeue.Cancelled, c.ID: litequeue.Pending, other.ID: litequeue.Pending} {
		if got := get(t, q, id).State; got != want {
			t.Errorf("job %d is %s, want %s", id, got, want)
		}
	}
	if got := ev.count("job.cancelled"); got != 2 { // a's, by Cancel, and b's
		t.Errorf("%d job.cancelled events, want 2", got)
	}

	for _, st := range []litequeue.State{"", litequeue.Completed, litequeue.Dead} {
		_, err := q.TallyCancel(ctx, litequeue.Filter{State: st})
		if err == nil || !strings.Contains(err.Error(), "pending, waiting or running") {
			t.Errorf("TallyCancel of state %q = %v, want an error naming the states it takes", st, err)
		}
		if _, err := q.CancelTallied(ctx, litequeue.Filter{State: st}, litequeue.Tally{}); err == nil {
			t.Errorf("CancelTallied of state %q = nil, want an error", st)
		}
	}
}

// TestQueue_CancelTallied_Running asks the running jobs counted to stop,
// as Cancel does one: their worker cancels them at its next renewal.
func TestQueue_CancelTallied_Running(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	started := make(chan struct{})
	q.Handle("slow", func(ctx context.Context, job *litequeue.Job) error {
		close(started)
		<-ctx.Done() // until the cancel
		return ctx.Err()
	})
	j := enqueue(t, q, "slow", nil)
	done := runDueAsync(q)
	<-started
	f := litequeue.Filter{State: litequeue.Running}
	tally, err := q.TallyCancel(t.Context(), f)
	if err != nil || tally.Jobs != 1 {
		t.Fatalf("TallyCancel of running jobs = %+v, %v; want 1", tally, err)
	}
	if n, err := q.CancelTallied(t.Context(), f, tally); n != 1 || err != nil {
		t.Fatalf("CancelTallied = %d, %v; want 1", n, err)
	}
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
	if got := get(t, q, j.ID).State; got != litequeue.Cancelled {
		t.Errorf("the running job is %s after CancelTallied and its run, want cancelled", got)
	}
}

// TestQueue_CancelTallied_Waiting cancels the waiting jobs counted, and
// their dependents by their rules.
func TestQueue_CancelTallied_Waiting(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	dep := enqueue(t, q, "report", nil, litequeue.Delay(time.Hour))
	w := enqueue(t, q, "report", nil, litequeue.DependsOn(dep.ID))
	after := enqueue(t, q, "report", nil, litequeue.DependsOn(w.ID))
	f := litequeue.Filter{State: litequeue.Waiting}
	tally, err := q.TallyCancel(t.Context(), f)
	if err != nil || tally.Jobs != 2 {
		t.Fatalf("TallyCancel of waiting jobs = %+v, %v; want 2", tally, err)
	}
	// The first's cancel cancels the second, its dependent, which by its
	// turn is finished and left alone.
	if n, err := q.CancelTallied(t.Context(), f, tally); n != 1 || err != nil {
		t.Fatalf("CancelTallied = %d, %v; want 1", n, err)
	}
	for id, want := range map[int64]litequeue.State{dep.ID: litequeue.Pending, w.ID: litequeue.Cancelled, after.ID: litequeue.Cancelled} {
		if got := get(t, q, id).State; got != want {
			t.Errorf("job %d is %s, want %s", id, got, want)
		}
	}
}

// TestQueue_DeleteTallied deletes, with their history, the finished jobs
// of the filter that TallyDelete counted, and only if they are as many.
func TestQueue_DeleteTallied(t *testing.T) {
	t.Parallel()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record})
	q.Handle("doomed", doomed)
	ctx := t.Context()
	a := enqueue(t, q, "doomed", nil)
	b := enqueue(t, q, "doomed", nil)
	live := enqueue(t, q, "doomed", nil, litequeue.Delay(time.Hour))
	runDue(t, q)
	f := litequeue.Filter{State: litequeue.Dead, Kind: "doomed"}
	tally, err := q.TallyDelete(ctx, f)
	if diff := cmp.Diff(litequeue.Tally{Jobs: 2, MaxID: b.ID}, tally); err != nil || diff != "" {
		t.Fatalf("TallyDelete: %v, (-want +got):\n%s", err, diff)
	}
	if err := q.Replay(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	var te *litequeue.TallyError
	if n, err := q.DeleteTallied(ctx, f, tally); n != 0 || !errors.As(err, &te) {
		t.Fatalf("DeleteTallied after a replay = %d, %v; want 0 and a TallyError", n, err)
	}
	if !exists(t, q, b.ID) {
		t.Fatal("a refused DeleteTallied deleted a job")
	}
	runDue(t, q) // a dies again
	tally, _ = q.TallyDelete(ctx, f)
	if n, err := q.DeleteTallied(ctx, f, tally); n != 2 || err != nil {
		t.Fatalf("DeleteTallied = %d, %v; want 2", n, err)
	}
	for _, id := range []int64{a.ID, b.ID} {
		if exists(t, q, id) || historyRows(t, q, id) != 0 {
			t.Errorf("job %d or its history is left after DeleteTallied", id)
		}
	}
	if !exists(t, q, live.ID) {
		t.Errorf("the pending job %d was deleted", live.ID)
	}
	if got := ev.count("job.deleted"); got != 2 {
		t.Errorf("%d job.deleted events, want 2", got)
	}
	for _, st := range []litequeue.State{"", litequeue.Pending, litequeue.Running} {
		if _, err := q.TallyDelete(ctx, litequeue.Filter{State: st}); err == nil || !strings.Contains(err.Error(), "completed, dead") {
			t.Errorf("TallyDelete of state %q = %v, want an error naming the states it takes", st, err)
		}
	}
}

// TestWithProgress: the bulk acts report after each transaction of 500
// jobs, and Copy after each job, up to their total.
func TestWithProgress(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()
	for range 1200 {
		enqueue(t, q, "bulk", nil)
	}
	var got [][2]int
	pctx := litequeue.WithProgress(ctx, func(done, total int) { got = append(got, [2]int{done, total}) })
	f := litequeue.Filter{State: litequeue.Pending}
	tally, err := q.TallyCancel(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := q.CancelTallied(pctx, f, tally); n != 1200 || err != nil {
		t.Fatalf("CancelTallied = %d, %v", n, err)
	}
	if diff := cmp.Diff([][2]int{{500, 1200}, {1000, 1200}, {1200, 1200}}, got); diff != "" {
		t.Errorf("progress of CancelTallied (-want +got):\n%s", diff)
	}

	// Copy: a report for each job, the last of them all.
	to, _ := openQueue(t, litequeue.Options{})
	for range 3 {
		enqueue(t, q, "copied", nil)
	}
	got = nil
	if _, err := litequeue.Copy(pctx, q, to); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]int{{0, 3}, {1, 3}, {2, 3}, {3, 3}}, got); diff != "" {
		t.Errorf("progress of Copy (-want +got):\n%s", diff)
	}
}

// TestQueue_DeleteTalliedKeepsWhatChangedState counts 501 dead jobs to
// delete (two transactions); after the first, one of those left is
// replayed and completes: the second leaves it alone, as it is no longer
// dead, though a completed job may be deleted.
func TestQueue_DeleteTalliedKeepsWhatChangedState(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var succeed atomic.Bool
	q.Handle("k", func(context.Context, *litequeue.Job) error {
		if succeed.Load() {
			return nil
		}
		return litequeue.Permanent(errors.New("no"))
	})
	ctx := t.Context()
	payloads := make([]any, 501)
	if _, err := q.EnqueueMany(ctx, "k", payloads); err != nil {
		t.Fatal(err)
	}
	runDue(t, q)
	f := litequeue.Filter{State: litequeue.Dead, Kind: "k"}
	tally, err := q.TallyDelete(ctx, f)
	if err != nil || tally.Jobs != 501 {
		t.Fatalf("TallyDelete = %+v, %v; want 501 jobs", tally, err)
	}
	var kept int64
	progress := litequeue.WithProgress(ctx, func(done, total int) {
		if kept != 0 || done == total {
			return
		}
		left, err := q.List(ctx, litequeue.Filter{State: litequeue.Dead, Kind: "k", Limit: 1})
		if err != nil || len(left) != 1 {
			t.Errorf("dead jobs left after the first transaction: %v, %v", left, err)
			return
		}
		kept = left[0].ID
		succeed.Store(true)
		if err := q.Replay(ctx, kept); err != nil {
			t.Error(err)
		}
		runDue(t, q)
	})
	n, err := q.DeleteTallied(progress, f, tally)
	if err != nil || n != 500 {
		t.Errorf("DeleteTallied = %d, %v; want 500: the replayed job is left alone", n, err)
	}
	if kept == 0 {
		t.Fatal("no progress after the first transaction")
	}
	if job := get(t, q, kept); job.State != litequeue.Completed {
		t.Errorf("the replayed job is %s, want completed and kept", job.State)
	}
}
