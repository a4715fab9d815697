package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

func TestFmtProgress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		done, total int
		elapsed     time.Duration
		want        string
	}{
		{0, 6000, 0, "replayed 0/6000 jobs (0%)"},
		{1500, 6000, 500 * time.Millisecond, "replayed 1500/6000 jobs (25%) · 3000 jobs/s · 1.5s left"},
		{6000, 6000, 2 * time.Second, "replayed 6000/6000 jobs (100%) · 3000 jobs/s"},
		{0, 0, time.Second, "replayed 0/0 jobs"},
	} {
		if got := fmtProgress("replayed", tc.done, tc.total, tc.elapsed); got != tc.want {
			t.Errorf("fmtProgress(%d, %d, %v) = %q, want %q", tc.done, tc.total, tc.elapsed, got, tc.want)
		}
	}
}

// TestProgress_OnTerminal: an act on many jobs draws its progress on
// stderr, in place, when stderr is a terminal, and wipes it; without a
// terminal, with --json, or for a few jobs, it draws nothing.
func TestProgress_OnTerminal(t *testing.T) {
	onBoth(t, func(t *testing.T, db string, q *litequeue.Queue) {
		tty := onTerminal(t, db, q, 2400)
		r := mustRun(t, tty, "cancel", "--all", "--kind", "bulk", "--before", "1001", "--yes")
		wantProgress(t, r, "cancelled 1000/1000 jobs (100%)")
		if r.stdout != "1000 pending jobs of kind bulk with an ID below 1001\ncancelled 1000 jobs\n" {
			t.Errorf("stdout = %q", r.stdout)
		}
		for _, run := range []struct {
			c    *cli
			args []string
		}{
			{testCLIOn(db), []string{"delete", "--all", "--state", "cancelled", "--yes"}},
			{tty, []string{"cancel", "--all", "--yes", "--json"}},
			{tty, []string{"delete", "--all", "--state", "cancelled", "--before", "1501", "--yes"}}, // 500 jobs
		} {
			if r := mustRun(t, run.c, run.args...); r.stderr != "" || !strings.Contains(r.stdout, "00") {
				t.Errorf("litequeue %s: stdout %q, stderr %q; want no progress", strings.Join(run.args, " "), r.stdout, r.stderr)
			}
		}
		if n, err := q.Count(t.Context(), litequeue.Filter{}); n != 900 || err != nil {
			t.Errorf("%d jobs left, %v; want 900", n, err)
		}
	})
}

// TestCopy_ProgressAndJSON: a copy of many jobs draws its progress on a
// terminal, and with --json writes what it copied instead.
func TestCopy_ProgressAndJSON(t *testing.T) {
	onBoth(t, func(t *testing.T, db string, q *litequeue.Queue) {
		tty := onTerminal(t, db, q, 600)
		r := mustRun(t, tty, "copy", "--to", filepath.Join(t.TempDir(), "a.db"))
		wantProgress(t, r, "copied 600/600 jobs (100%)")
		to := filepath.Join(t.TempDir(), "b.db")
		r = mustRun(t, tty, "copy", "--to", to, "--json")
		got := decode[map[string]any](t, r)
		want := map[string]any{"from": redact(db), "to": to, "jobs": float64(600), "history_rows": float64(0), "keys": float64(0), "skipped": float64(0)}
		if diff := cmp.Diff(want, got); diff != "" || r.stderr != "" {
			t.Errorf("copy --json (-want +got):\n%s\nstderr %q", diff, r.stderr)
		}
	})
}

// onTerminal enqueues n jobs of kind bulk with q, and returns a test cli
// on db whose stderr is a terminal.
func onTerminal(t *testing.T, db string, q *litequeue.Queue, n int) *cli {
	t.Helper()
	if _, err := q.EnqueueMany(t.Context(), "bulk", make([]any, n)); err != nil {
		t.Fatal(err)
	}
	c := testCLIOn(db)
	c.stderrTTY = true
	return c
}

// wantProgress checks that r drew the progress line that starts with
// last, and wiped it at the end.
func wantProgress(t *testing.T, r result, last string) {
	t.Helper()
	if !strings.Contains(r.stderr, "\r\x1b[K"+last) || !strings.HasSuffix(r.stderr, "\r\x1b[K") {
		t.Errorf("stderr on a terminal = %q, want the progress line %q, wiped", r.stderr, last)
	}
}
