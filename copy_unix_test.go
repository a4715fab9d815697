//go:build unix

package litequeue_test

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// copyEnd is a database that TestCopy_Killed copies from or into, as the
// command names it, with the test's own Queue on it.
type copyEnd struct {
	name string // a file path, or a server's URL
	q    *litequeue.Queue
	// writing reports whether a process other than the test's is in the
	// middle of a write into it.
	writing func() bool
}

// fileEnd is a new file.
func fileEnd(t *testing.T) copyEnd {
	t.Helper()
	path := filepath.Join(t.TempDir(), "end.db")
	q, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	// A write too large for SQLite's page cache spills its pages into the
	// -wal before it commits; the test's Queue writes nothing.
	return copyEnd{name: path, q: q, writing: func() bool {
		fi, err := os.Stat(path + "-wal")
		return err == nil && fi.Size() > 1<<20
	}}
}

// backendEnd is a new file, or a new schema of the server on the
// PostgreSQL suite, whose URL then names the command's connections.
func backendEnd(t *testing.T) copyEnd {
	t.Helper()
	if !onPostgres {
		return fileEnd(t)
	}
	q, path := openQueue(t, litequeue.Options{})
	u, err := url.Parse(schemaFor(t, path))
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("lqcopy_%d_%d", os.Getpid(), time.Now().UnixNano())
	v := u.Query()
	v.Set("application_name", app)
	u.RawQuery = v.Encode()
	return copyEnd{name: u.String(), q: q, writing: func() bool {
		var n int
		err := q.DB().Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND backend_xid IS NOT NULL`, app)
		return err == nil && n > 0
	}}
}

// copied matches the command's report of a copy.
var copied = regexp.MustCompile(`^copied (\d+) jobs, \d+ history rows and \d+ keys from .* to .*; skipped (\d+) jobs copied before\n$`)

// runCopy runs the command's copy from from into to to its end, and
// returns the jobs it copied and skipped.
func runCopy(t *testing.T, from, to copyEnd) (jobs, skipped int) {
	t.Helper()
	out, err := exec.Command(buildCommand(t), "--db", from.name, "copy", "--to", to.name).CombinedOutput()
	if err != nil {
		t.Fatalf("litequeue copy: %v\n%s", err, out)
	}
	m := copied.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("litequeue copy printed %q", out)
	}
	jobs, _ = strconv.Atoi(m[1])
	skipped, _ = strconv.Atoi(m[2])
	return jobs, skipped
}

// TestCopy_Killed SIGKILLs the command's copy in the middle of its write
// into the target, in both directions between the suite's backend and a
// file, then runs it again to its end, and once more: every job of the
// source is in the target exactly once, and the last copy skips them all.
func TestCopy_Killed(t *testing.T) {
	t.Parallel()
	for _, dir := range []struct {
		name     string
		from, to func(*testing.T) copyEnd
	}{
		{"to the backend", fileEnd, backendEnd},
		{"from the backend", backendEnd, fileEnd},
	} {
		t.Run(dir.name, func(t *testing.T) {
			t.Parallel()
			from, to := dir.from(t), dir.to(t)
			const n = 5000
			pad := strings.Repeat("x", 1000)
			for i := 0; i < n; i += 1000 {
				batch := make([]any, 1000)
				for j := range batch {
					batch[j] = fmt.Sprintf("%d %s", i+j, pad)
				}
				if _, err := from.q.EnqueueMany(t.Context(), "k", batch); err != nil {
					t.Fatal(err)
				}
			}

			cmd := exec.Command(buildCommand(t), "--db", from.name, "copy", "--to", to.name)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			waitWithin(t, 2*time.Minute, "the copy to write into the target", func() bool {
				select {
				case err := <-exited:
					t.Fatalf("the copy ended (%v) before it was seen writing into the target", err)
				default:
				}
				return to.writing()
			})
			cmd.Process.Kill()
			<-exited
			before, err := to.q.Count(t.Context(), litequeue.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("killed in the middle of its write: %d jobs in the target", before)

			jobs, skipped := runCopy(t, from, to)
			if jobs+skipped != n || skipped != before {
				t.Errorf("copy after the kill: %d jobs copied, %d skipped; want %d in all, %d skipped", jobs, skipped, n, before)
			}
			if jobs, skipped := runCopy(t, from, to); jobs != 0 || skipped != n {
				t.Errorf("copy once more: %d jobs copied, %d skipped; want 0, %d", jobs, skipped, n)
			}
			got, err := to.q.List(t.Context(), litequeue.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			times := make(map[string]int, n)
			for _, j := range got {
				times[string(j.Payload)]++
			}
			for i := range n {
				if p := fmt.Sprintf(`"%d %s"`, i, pad); times[p] != 1 {
					t.Fatalf("job %d of the source is %d times in the target, want once (%d jobs there)", i, times[p], len(got))
				}
			}
		})
	}
}
