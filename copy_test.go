package litequeue_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// TestCopy_Jobs copies a file's unfinished and dead jobs, with their history
// and keys, into the suite's backend (a file, or with
// LITEQUEUE_TEST_BACKEND=postgres a server): every copied job as it was
// but its ID, its history whole, the finished job left behind; the dead
// job replays there. A second copy skips every job, changing nothing.
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
	res, err = litequeue.Copy(ctx, from, to)
	if want := (litequeue.CopyResult{Keys: 1, Skipped: 4}); err != nil || res != want {
		t.Fatalf("second Copy = %+v, %v; want %+v", res, err, want)
	}
	if after, err := to.Count(ctx, litequeue.Filter{}); err != nil || after != before {
		t.Fatalf("%d jobs after the second copy (%v), want %d", after, err, before)
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

// TestCopy_UniqueKeyTaken copies a job whose unique key a live job of
// the target holds: the copy fails, naming the key, and copies nothing.
func TestCopy_UniqueKeyTaken(t *testing.T) {
	t.Parallel()
	from, _ := openQueue(t, litequeue.Options{})
	to, _ := openQueue(t, litequeue.Options{})
	enqueue(t, from, "k", "first")
	enqueue(t, from, "k", "unique", litequeue.UniqueKey("u"))
	enqueue(t, to, "k", "holder", litequeue.UniqueKey("u"))
	if _, err := litequeue.Copy(t.Context(), from, to); err == nil || !strings.Contains(err.Error(), `unique key "u"`) {
		t.Fatalf("Copy = %v, want a failure naming the unique key", err)
	}
	if n, err := to.Count(t.Context(), litequeue.Filter{}); err != nil || n != 1 {
		t.Fatalf("%d jobs after the failed copy (%v), want 1: all or nothing", n, err)
	}
}

// copyDirections are the two ways of a copy between the suite's backend
// and a file: on the file suite, both from a file to a file.
var copyDirections = []struct {
	name     string
	from, to func(t *testing.T, opts litequeue.Options) *litequeue.Queue
}{
	{"to the backend", openFile, openBackendQueue},
	{"from the backend", openBackendQueue, openFile},
}

// openFile opens a Queue on a new file, whatever the suite's backend.
func openFile(t *testing.T, opts litequeue.Options) *litequeue.Queue {
	t.Helper()
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "file.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// openBackendQueue opens a Queue on a new file, or a new schema of the
// server on the PostgreSQL suite.
func openBackendQueue(t *testing.T, opts litequeue.Options) *litequeue.Queue {
	t.Helper()
	q, _ := openQueue(t, opts)
	return q
}

// TestCopy_Again copies one database into another again and again, in
// both directions between the suite's backend and a file: a job is
// copied once, by the first Copy that finds it in the source; a job
// enqueued in the source since is copied by the next, the others
// skipped; a copied job that completed and was purged in the target is
// not copied again.
func TestCopy_Again(t *testing.T) {
	t.Parallel()
	for _, dir := range copyDirections {
		t.Run(dir.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			clk := newMock()
			opts := litequeue.Options{Clock: clk, Retry: litequeue.Policy{Jitter: litequeue.NoJitter}}
			from, to := dir.from(t, opts), dir.to(t, opts)
			from.Handle("fail", doomed)
			enqueue(t, from, "fail", "dies")
			runDue(t, from)
			enqueue(t, from, "k", 1)
			enqueue(t, from, "k", 2, litequeue.Delay(time.Hour))
			copyWant(t, from, to, litequeue.CopyResult{Jobs: 3, HistoryRows: 1})
			copyWant(t, from, to, litequeue.CopyResult{Skipped: 3})

			enqueue(t, from, "k", 3)
			copyWant(t, from, to, litequeue.CopyResult{Jobs: 1, Skipped: 3})

			to.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
			clk.Add(time.Hour)
			if n := runDue(t, to); n != 3 {
				t.Fatalf("RunDue ran %d copied jobs, want 3", n)
			}
			clk.Add(litequeue.DefaultKeepFinished + time.Minute)
			runDue(t, to) // purges them
			if n, err := to.Count(ctx, litequeue.Filter{}); err != nil || n != 1 {
				t.Fatalf("%d jobs in the target once the copies were purged (%v), want the dead one", n, err)
			}
			copyWant(t, from, to, litequeue.CopyResult{Skipped: 4})
			if n, err := to.Count(ctx, litequeue.Filter{}); err != nil || n != 1 {
				t.Fatalf("%d jobs in the target after copying again (%v), want 1", n, err)
			}
		})
	}
}

// copyWant copies from into to and checks the result.
func copyWant(t *testing.T, from, to *litequeue.Queue, want litequeue.CopyResult) {
	t.Helper()
	res, err := litequeue.Copy(t.Context(), from, to)
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if res != want {
		t.Fatalf("Copy = %+v, want %+v", res, want)
	}
}

// TestCopy_TwoSources copies into one target from two databases whose
// jobs are alike in everything (ID, creation time on one mock clock,
// queue, kind, payload): each database's job is copied, since the two
// databases are not one.
func TestCopy_TwoSources(t *testing.T) {
	t.Parallel()
	for _, dir := range copyDirections {
		t.Run(dir.name, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			to := dir.to(t, litequeue.Options{Clock: clk})
			for range 2 {
				from := dir.from(t, litequeue.Options{Clock: clk})
				enqueue(t, from, "k", "same")
				copyWant(t, from, to, litequeue.CopyResult{Jobs: 1})
			}
		})
	}
}

// TestCopy_SameDatabase refuses a copy between two Queues on one
// database, which would run each job twice, and copies nothing.
func TestCopy_SameDatabase(t *testing.T) {
	t.Parallel()
	from, path := openQueue(t, litequeue.Options{})
	enqueue(t, from, "k", nil)
	to := openAt(t, path, litequeue.Options{})
	if _, err := litequeue.Copy(t.Context(), from, to); err == nil || !strings.Contains(err.Error(), "one database") {
		t.Fatalf("Copy between two Queues on one database = %v, want a refusal", err)
	}
	if n, err := to.Count(t.Context(), litequeue.Filter{}); err != nil || n != 1 {
		t.Fatalf("%d jobs after the refused copy (%v), want 1", n, err)
	}
}

// TestCopy_ReadOnlyOldFile copies from a file of schema version 3, which
// has no database ID, opened read-only as the command copies, twice: the
// second copy skips every job, and the file is left byte for byte as it
// was. Once the app's newer binary has opened the file (which gives it
// an ID) the jobs copied before are still skipped, and a job enqueued
// since is copied.
func TestCopy_ReadOnlyOldFile(t *testing.T) {
	t.Parallel()
	path := oldFile(t, 3)
	to, _ := openQueue(t, litequeue.Options{})
	before := fileContent(t, path)
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	copyWant(t, ro, to, litequeue.CopyResult{Jobs: 3, HistoryRows: 2})
	copyWant(t, ro, to, litequeue.CopyResult{Skipped: 3})
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(before, fileContent(t, path)) {
		t.Error("copying from the read-only file changed it")
	}

	app, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	enqueue(t, app, "k", "new")
	copyWant(t, app, to, litequeue.CopyResult{Jobs: 1, Skipped: 3})
}

// fileContent reads the file at path and its -wal, if any: only while no
// connection of this process is open on it.
func fileContent(t *testing.T, path string) [][]byte {
	t.Helper()
	b := [][]byte{readFile(t, path)}
	if _, err := os.Stat(path + "-wal"); err == nil {
		b = append(b, readFile(t, path+"-wal"))
	}
	return b
}

// TestCopy_Concurrently copies one source into one target from two Queues
// on the target at once (two pools, as two processes): each job is copied
// once, by one of them, and skipped by the other.
func TestCopy_Concurrently(t *testing.T) {
	t.Parallel()
	from, _ := openQueue(t, litequeue.Options{})
	payloads := make([]any, 200)
	for i := range payloads {
		payloads[i] = i
	}
	if _, err := from.EnqueueMany(t.Context(), "k", payloads); err != nil {
		t.Fatal(err)
	}
	to, path := openQueue(t, litequeue.Options{})
	targets := []*litequeue.Queue{to, openAt(t, path, litequeue.Options{})}
	results := make([]litequeue.CopyResult, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, q := range targets {
		wg.Go(func() { results[i], errs[i] = litequeue.Copy(t.Context(), from, q) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Copy %d: %v", i, err)
		}
	}
	if jobs, skipped := results[0].Jobs+results[1].Jobs, results[0].Skipped+results[1].Skipped; jobs != 200 || skipped != 200 {
		t.Errorf("Copy = %+v and %+v: want 200 jobs copied and 200 skipped in all", results[0], results[1])
	}
	if n, err := to.Count(t.Context(), litequeue.Filter{}); err != nil || n != 200 {
		t.Fatalf("%d jobs in the target (%v), want 200", n, err)
	}
}

// TestCopy_Dependencies: jobs waiting for their dependencies are copied
// waiting, with their edges to the jobs copied beside them, and go on in
// to as their dependencies complete there: an edge met in from stays met,
// a dead dependency copied dead lets a WaitIfFailed dependent go on once
// replayed in to, and a job that waits on one that is not in from (its
// row deleted by raw SQL: never to complete) is copied cancelled, and its
// dependent after it. A second Copy skips them all.
func TestCopy_Dependencies(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	from := openSourceFile(t, clk)
	from.Handle("ok", ok)
	from.Handle("fail", failing)
	done, dead, dropped := enqueue(t, from, "ok", nil), enqueue(t, from, "fail", nil), enqueue(t, from, "fail", nil)
	runDue(t, from)
	later := enqueue(t, from, "ok", nil, litequeue.Delay(time.Hour))
	w1 := enqueue(t, from, "step", nil, litequeue.DependsOn(done.ID, later.ID))
	w2 := enqueue(t, from, "step", nil, litequeue.DependsOn(w1.ID))
	w3 := enqueue(t, from, "step", nil, litequeue.DependsOnRule(litequeue.WaitIfFailed, dead.ID))
	w4 := enqueue(t, from, "step", nil, litequeue.DependsOnRule(litequeue.WaitIfFailed, dropped.ID))
	w5 := enqueue(t, from, "step", nil, litequeue.DependsOn(w4.ID))
	if _, err := from.DB().Exec(`DELETE FROM litequeue_jobs WHERE id = ?`, dropped.ID); err != nil {
		t.Fatal(err)
	}

	to, _ := openQueue(t, litequeue.Options{Clock: clk})
	res, err := litequeue.Copy(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if res.Jobs != 7 {
		t.Fatalf("Copy = %+v, want 7 jobs: dead, later and the five waiting", res)
	}
	jobs, err := to.List(ctx, litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	copied := map[int64]*litequeue.Job{} // by ID in from: copies keep their order
	for i, src := range []int64{dead.ID, later.ID, w1.ID, w2.ID, w3.ID, w4.ID, w5.ID} {
		copied[src] = jobs[i]
	}
	states := map[int64]litequeue.State{}
	for src, j := range copied {
		states[src] = j.State
	}
	want := map[int64]litequeue.State{dead.ID: litequeue.Dead, later.ID: litequeue.Pending,
		w1.ID: litequeue.Waiting, w2.ID: litequeue.Waiting, w3.ID: litequeue.Waiting, w4.ID: litequeue.Cancelled, w5.ID: litequeue.Cancelled}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Fatalf("states in to, by ID in from (-want +got):\n%s", diff)
	}
	if got := copied[w4.ID].LastError; got != "dependency "+itoa(dropped.ID)+" not copied" {
		t.Fatalf("the job waiting on one not copied: %q", got)
	}
	if got, want := copied[w5.ID].LastError, "dependency "+itoa(copied[w4.ID].ID)+" cancelled"; got != want {
		t.Fatalf("the job waiting on one copied cancelled: %q, want %q", got, want)
	}
	var order ranOrder
	to.Handle("ok", ok)
	to.Handle("fail", ok)
	to.Handle("step", order.handle)
	clk.Add(time.Hour)
	runDue(t, to)
	if err := to.Replay(ctx, copied[dead.ID].ID); err != nil {
		t.Fatal(err)
	}
	runDue(t, to)
	if diff := cmp.Diff([]int64{copied[w1.ID].ID, copied[w2.ID].ID, copied[w3.ID].ID}, order.got()); diff != "" {
		t.Fatalf("ran in to (-want +got):\n%s", diff)
	}
	again, err := litequeue.Copy(ctx, from, to)
	if err != nil || again.Jobs != 0 || again.Skipped != 7 {
		t.Fatalf("second Copy = %+v, %v; want every job skipped", again, err)
	}
}

// TestCopy_DependenciesAgain: a job copied by a second Copy, whose
// dependency the first Copy copied and which has completed in to since,
// is copied pending, as an enqueue on a completed job is.
func TestCopy_DependenciesAgain(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	from := openSourceFile(t, clk)
	a := enqueue(t, from, "ok", nil)
	to, _ := openQueue(t, litequeue.Options{Clock: clk})
	if _, err := litequeue.Copy(ctx, from, to); err != nil {
		t.Fatal(err)
	}
	to.Handle("ok", ok)
	runDue(t, to) // a's copy completes in to
	enqueue(t, from, "ok", nil, litequeue.DependsOn(a.ID))
	res, err := litequeue.Copy(ctx, from, to)
	if err != nil || res.Jobs != 1 || res.Skipped != 1 {
		t.Fatalf("second Copy = %+v, %v", res, err)
	}
	if n := runDue(t, to); n != 1 {
		t.Fatalf("ran %d in to, want the job copied second", n)
	}
}

// openSourceFile opens a file in t.TempDir, whatever the suite's
// backend, as the source of a Copy, on clk; it is closed at the end of
// the test.
func openSourceFile(t *testing.T, clk *clock.Mock) *litequeue.Queue {
	t.Helper()
	from, err := litequeue.Open(filepath.Join(t.TempDir(), "from.db"), litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { from.Close() })
	return from
}
