//go:build unix

package litequeue_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestProcess_PausedWorker SIGSTOPs a worker while it runs a job, past its
// lease; another worker rescues the job and completes it; after SIGCONT the
// stopped worker's completion is refused, and the job's side effect exists
// once.
func TestProcess_PausedWorker(t *testing.T) {
	dir := t.TempDir()
	path, startsLog := filepath.Join(dir, "q.db"), filepath.Join(dir, "starts")
	q := openAt(t, path, litequeue.Options{})
	j := enqueue(t, q, "slow", 150) // 150ms of work
	paused, _, pausedLog := startProc(t, "work", path, "paused", startsLog)
	waitFor(t, "the worker to start the job", func() bool {
		starts, _ := readStarts(t, startsLog)
		return starts[j.ID] == 1
	})
	paused.Process.Signal(syscall.SIGSTOP)
	other, _, _ := startProc(t, "work", path, "other", startsLog)
	waitFor(t, "the other worker to complete the job", func() bool {
		return get(t, q, j.ID).State == litequeue.Completed
	})
	paused.Process.Signal(syscall.SIGCONT)
	waitFor(t, "the paused worker's stale completion to be refused", func() bool {
		return strings.Contains(pausedLog.String(), "its lease was lost")
	})
	for _, w := range []*exec.Cmd{paused, other} {
		w.Process.Signal(syscall.SIGTERM)
		w.Wait()
	}
	if fx := effects(t, q); fx[j.ID] != 1 {
		t.Fatalf("%d side effects, want 1", fx[j.ID])
	}
	h := history(t, q, j.ID)
	if len(h) != 2 || h[0].Outcome != litequeue.OutcomeLeaseExpired || h[0].Worker != "paused" ||
		h[1].Outcome != litequeue.OutcomeCompleted || h[1].Worker != "other" {
		t.Fatalf("history outcomes %v, want lease_expired by paused, completed by other: %+v", outcomes(h), h)
	}
}
