//go:build unix

package litequeue_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestProcess_Pause pauses a kind from a child process (proc pause): the
// parent's Work stops claiming it and takes the other kind's jobs; the
// litequeue command, another process, resumes it, and the parent's Work
// takes its job. On the file the parent notices the resume at its poll,
// on the mock clock the test moves on; on PostgreSQL the resume's
// notification wakes it, the clock standing still.
func TestProcess_Pause(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "q.db")
	clk := newMock()
	q := openAt(t, path, litequeue.Options{Clock: clk})
	q.Handle("a", func(ctx context.Context, job *litequeue.Job) error { return nil })
	q.Handle("b", func(ctx context.Context, job *litequeue.Job) error { return nil })
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 4})
	defer stop()

	child, out, _ := startProc(t, "pause", path, "kind", "a")
	waitProc(t, child, 30*time.Second)
	if got, want := out.String(), "pause kind a\n"; got != want {
		t.Fatalf("proc pause printed %q, want %q", got, want)
	}
	st, err := q.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a"}, pausedKinds(st.Paused)); diff != "" {
		t.Fatalf("paused kinds (-want +got):\n%s", diff)
	}
	held := enqueue(t, q, "a", nil)
	other := enqueue(t, q, "b", nil)
	waitFor(t, "the other kind's job to complete", func() bool { return get(t, q, other.ID).State == litequeue.Completed })
	for range 3 { // polls of the file: still paused
		clk.Add(time.Second)
	}
	if got := get(t, q, held.ID).State; got != litequeue.Pending {
		t.Fatalf("the paused kind's job is %s, want pending", got)
	}

	db := path
	if onPostgres {
		db = schemaFor(t, path)
	}
	resume := exec.Command(buildCommand(t), "--db", db, "resume", "--kind", "a")
	if b, err := resume.CombinedOutput(); err != nil || string(b) != "resumed kind a\n" {
		t.Fatalf("litequeue resume: %v, output %q", err, b)
	}
	waitFor(t, "the resumed kind's job to complete", func() bool {
		if get(t, q, held.ID).State == litequeue.Completed {
			return true
		}
		if !onPostgres {
			clk.Add(100 * time.Millisecond) // Work's poll of the file
		}
		return false
	})
}

// pausedKinds lists the kinds in ps.
func pausedKinds(ps []litequeue.Pause) []string {
	var kinds []string
	for _, p := range ps {
		if p.Kind != "" {
			kinds = append(kinds, p.Kind)
		}
	}
	return kinds
}
