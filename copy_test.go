package litequeue_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// TestCopy_Jobs copies a file's unfinished and dead jobs, with their history
// and keys, into the suite's backend (a file, or with
// LITEQUEUE_TEST_BACKEND=postgres a server): every copied job as it was
// but its ID, its history whole, the finished job left behind; the dead
// job replays there. A second copy, whose unique key is now live in the
// target, fails and changes nothing.
func TestCopy_Jobs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	fromPath := filepath.Join(t.TempDir(), "from.db")
	from, err := litequeue.Open(fromPath,
		litequeue.Options{Clock: clk, Retry: litequeue.Policy{Jitter: litequeue.NoJitter, MaxTries: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	from.Handle("fail", doomed)
	from.Handle("ok", func(context.Context, *litequeue.Job) error { return nil })
	from.Handle("flaky", func(context.Context, *litequeue.Job) error { return errors.New("flaky") })
	enqueue(t, from, "ok", "done")
	dead := enqueue(t, from, "fail", "dies")
	runDue(t, from) // ok is completed, fail dead
	enqueue(t, from, "flaky", "retries")
	runDue(t, from) // flaky waits for its retry
	enqueue(t, from, "ok", "unique", litequeue.UniqueKey("u"), litequeue.Metadata("m", "v"), litequeue.Priority(3))
	enqueue(t, from, "ok", "later", litequeue.Delay(24*time.Hour), litequeue.OnQueue("slow"))
	mark(t, from, "key", time.Hour)

	to, _ := openQueue(t, litequeue.Options{Clock: clk})
	res, err := litequeue.Copy(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if want := (litequeue.CopyResult{Jobs: 4, HistoryRows: 2, Keys: 1}); res != want {
		t.Fatalf("Copy = %+v, want %+v", res, want)
	}
	ignoreID := cmpopts.IgnoreFields(litequeue.Job{}, "ID")
	for _, state := range []litequeue.State{litequeue.Pending, litequeue.Dead, litequeue.Completed} {
		was, err := from.List(ctx, litequeue.Filter{State: state})
		if err != nil {
			t.Fatal(err)
		}
		got, err := to.List(ctx, litequeue.Filter{State: state})
		if err != nil {
			t.Fatal(err)
		}
		if state == litequeue.Completed {
			was = nil // finished jobs stay behind
		}
		if diff := cmp.Diff(was, got, ignoreID, cmpopts.EquateEmpty(), cmp.AllowUnexported(litequeue.Job{}),
			cmpopts.IgnoreUnexported(litequeue.Job{})); diff != "" {
			t.Errorf("%s jobs (-from +to):\n%s", state, diff)
		}
		for i := range min(len(was), len(got)) {
			if diff := cmp.Diff(history(t, from, was[i].ID), history(t, to, got[i].ID)); diff != "" {
				t.Errorf("history of job %d, now %d (-from +to):\n%s", was[i].ID, got[i].ID, diff)
			}
		}
	}
	if !seen(t, to, "key") {
		t.Error("the idempotency key was not copied")
	}
	deadIn, err := to.List(ctx, litequeue.Filter{State: litequeue.Dead})
	if err != nil || len(deadIn) != 1 || string(deadIn[0].Payload) != `"dies"` {
		t.Fatalf("dead jobs in to: %v, %v; want job %d's copy", deadIn, err, dead.ID)
	}
	if err := to.Replay(ctx, deadIn[0].ID); err != nil {
		t.Fatalf("Replay of the copied dead job: %v", err)
	}

	before, err := to.Count(ctx, litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := litequeue.Copy(ctx, from, to); err == nil || !strings.Contains(err.Error(), `unique key "u"`) {
		t.Fatalf("second Copy = %v, want a failure naming the unique key", err)
	}
	if after, err := to.Count(ctx, litequeue.Filter{}); err != nil || after != before {
		t.Fatalf("%d jobs after the failed copy (%v), want %d: all or nothing", after, err, before)
	}
	if _, err := litequeue.Copy(ctx, to, to); err == nil {
		t.Fatal("Copy from a Queue to itself succeeded")
	}

	// From a Queue of OpenReadOnly, as the command copies.
	ro, err := litequeue.OpenReadOnly(fromPath, litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	other, _ := openQueue(t, litequeue.Options{Clock: clk})
	mark(t, other, "key", 3*time.Hour) // later than the copied key's expiry
	if res, err := litequeue.Copy(ctx, ro, other); err != nil || res.Jobs != 4 {
		t.Fatalf("Copy from a read-only Queue = %+v, %v; want 4 jobs", res, err)
	}
	clk.Add(2 * time.Hour)
	if !seen(t, other, "key") {
		t.Error("the copy cut short the expiry of a key the target held longer")
	}
}

// TestCopy_KeepsExpiry copies a job with an expiry: the copy expires when
// the original would have.
func TestCopy_KeepsExpiry(t *testing.T) {
	t.Parallel()
	clk := newMock()
	from, _ := openQueue(t, litequeue.Options{Clock: clk})
	to, _ := openQueue(t, litequeue.Options{Clock: clk})
	job := enqueue(t, from, "k", nil, litequeue.Delay(time.Minute), litequeue.ExpireAfter(time.Hour))
	if _, err := litequeue.Copy(t.Context(), from, to); err != nil {
		t.Fatal(err)
	}
	jobs, err := to.List(t.Context(), litequeue.Filter{})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("List of the copy: %d jobs (%v), want 1", len(jobs), err)
	}
	if !jobs[0].ExpiresAt.Equal(job.ExpiresAt) {
		t.Fatalf("copied ExpiresAt %v, want %v", jobs[0].ExpiresAt, job.ExpiresAt)
	}
}
