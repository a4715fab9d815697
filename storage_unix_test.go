//go:build unix

package litequeue_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestProcess_SecondOpenKeepsLocks runs a process that enqueues, opens its
// file a second time (OpenReadOnly, then Close) and enqueues again, while
// outside clients open and close the file in between. On POSIX, closing
// any descriptor of a file drops every lock the process holds on it,
// SQLite's included: had the second open closed one, the sqlite3 shell
// would take itself for the file's last user, checkpoint and delete the
// -wal under the process. The enqueues acknowledged after that, into an
// unlinked -wal, would be lost to a SIGKILL; and a clean stop, whose
// checkpoint writes that -wal into the file, would lose the jobs the
// litequeue command enqueued meanwhile.
func TestProcess_SecondOpenKeepsLocks(t *testing.T) {
	fileOnly(t, "SQLite's file locks")
	t.Parallel()
	t.Run("killed", func(t *testing.T) {
		t.Parallel()
		shell := sqlite3Shell(t)
		secondOpen(t, true, func(path string) int {
			readWithShell(t, shell, path)
			return 0
		})
	})
	t.Run("stopped after the command enqueued", func(t *testing.T) {
		t.Parallel()
		shell, command := sqlite3Shell(t), buildCommand(t)
		secondOpen(t, false, func(path string) int {
			readWithShell(t, shell, path)
			for i := range 5 {
				out, err := exec.CommandContext(t.Context(), command, "--db", path, "enqueue", "cli", strconv.Itoa(i)).CombinedOutput()
				if err != nil {
					t.Fatalf("litequeue enqueue: %v\n%s", err, out)
				}
			}
			return 5
		})
	})
}

// sqlite3Shell returns the path of SQLite's own command-line shell, the
// outside client of the tests that check how litequeue shares its file.
// Without it such a test skips, except under CI (CI set), where .ci/run
// installs it: there a missing shell fails the test.
func sqlite3Shell(t *testing.T) string {
	t.Helper()
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the sqlite3 shell is missing under CI (.ci/run installs it): %v", err)
		}
		t.Skip("the sqlite3 shell is not installed (Debian: apt-get install sqlite3)")
	}
	return shell
}

// readWithShell counts the jobs in the file with the sqlite3 shell.
func readWithShell(t *testing.T, shell, path string) {
	t.Helper()
	got, err := exec.CommandContext(t.Context(), shell, path, "SELECT count(*) FROM litequeue_jobs").CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "10" {
		t.Fatalf("sqlite3 counts %q (%v), want 10", got, err)
	}
}

// secondOpen runs TestProcess_SecondOpenKeepsLocks with the outside
// clients, which return how many jobs of kind "cli" they enqueued. The
// process ends with a SIGKILL if kill, else with a clean Close.
func secondOpen(t *testing.T, kill bool, outside func(path string) int) {
	path := filepath.Join(t.TempDir(), "q.db")
	cmd := exec.Command(buildProc(t), "reopen", path, "10")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := new(output)
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	waitFor(t, "10 enqueues and the second open", func() bool { return strings.Contains(out.String(), "reopened\n") })

	outsideJobs := outside(path)
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("after the outside client closed the file, the working process's -wal is gone: %v", err)
	}
	if _, err := io.WriteString(stdin, "go on\n"); err != nil {
		t.Fatal(err)
	}
	acked := func() []int64 {
		var ids []int64
		for _, f := range strings.Fields(out.String()) {
			if id, err := strconv.ParseInt(f, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
		return ids
	}
	waitFor(t, "20 acknowledged enqueues", func() bool { return len(acked()) == 20 })
	if kill {
		cmd.Process.Kill()
	} else {
		stdin.Close() // the process closes its Queue and exits
	}
	if err := cmd.Wait(); err != nil && !kill {
		t.Fatalf("the process: %v", err)
	}

	q := openAt(t, path, litequeue.Options{})
	lost := 0
	for _, id := range acked() {
		if j, err := q.Get(t.Context(), id); errors.Is(err, litequeue.ErrNotFound) || err == nil && j.Kind != "slow" {
			lost++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if lost > 0 {
		t.Errorf("%d of 20 acknowledged enqueues are gone after the process ended", lost)
	}
	if jobs, err := q.List(t.Context(), litequeue.Filter{Kind: "cli"}); err != nil || len(jobs) != outsideJobs {
		t.Errorf("%d jobs of the outside client's %d are in the file (%v)", len(jobs), outsideJobs, err)
	}
}
