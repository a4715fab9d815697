//go:build unix

package litequeue_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// These tests measure the file and its WAL as jobs come and go. They run
// with Synchronous "normal" (sizes do not depend on it; time does). Set
// LITEQUEUE_SOAK=1 for the 100,000-job run, or LITEQUEUE_GROWTH_JOBS=N for
// a run of N jobs (1000000: about ten minutes on two cores).

// fileSizes is what the file takes on disk and in pages.
type fileSizes struct {
	DB, WAL     int64 // bytes
	Pages, Free int   // page_count, freelist_count
}

func (s fileSizes) String() string {
	return fmt.Sprintf("file %s (%d pages, %d free), WAL %s", mib(s.DB), s.Pages, s.Free, mib(s.WAL))
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

func sizesOf(t *testing.T, q *litequeue.Queue, path string) fileSizes {
	t.Helper()
	var s fileSizes
	if fi, err := os.Stat(path); err == nil {
		s.DB = fi.Size()
	}
	if fi, err := os.Stat(path + "-wal"); err == nil {
		s.WAL = fi.Size()
	}
	if err := q.DB().Get(&s.Pages, `PRAGMA page_count`); err != nil {
		t.Fatal(err)
	}
	if err := q.DB().Get(&s.Free, `PRAGMA freelist_count`); err != nil {
		t.Fatal(err)
	}
	return s
}

// completeJobs enqueues n jobs with 200-byte payloads, in batches, and
// runs them all.
func completeJobs(t *testing.T, q *litequeue.Queue, n int) {
	t.Helper()
	pad := strings.Repeat("x", 200)
	for i := 0; i < n; i += 1000 {
		batch := make([]any, min(1000, n-i))
		for j := range batch {
			batch[j] = map[string]any{"n": i + j, "pad": pad}
		}
		if _, err := q.EnqueueMany(context.Background(), "k", batch); err != nil {
			t.Fatal(err)
		}
	}
	if got := runDue(t, q); got != n {
		t.Fatalf("RunDue ran %d jobs, want %d", got, n)
	}
}

// openGrowth opens a queue on a new file whose kind "k" succeeds.
func openGrowth(t *testing.T, opts litequeue.Options) (*litequeue.Queue, string) {
	t.Helper()
	opts.Synchronous = "normal"
	q, path := openQueue(t, opts)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	return q, path
}

// TestQueue_GrowthAndRetention completes 10,000 jobs (100,000 with
// LITEQUEUE_SOAK=1, N with LITEQUEUE_GROWTH_JOBS=N), lets retention purge
// them, and checks that the file does not keep its peak size: the janitor
// gives the free pages back (auto_vacuum=INCREMENTAL), and the WAL file is
// cut back to 4 MiB when it starts again.
func TestQueue_GrowthAndRetention(t *testing.T) {
	fileOnly(t, "the file's pages")
	if race {
		t.Skip("10,000 job runs take a minute under the race detector; nothing here is concurrent")
	}
	n := soak(10_000, 100_000)
	if env := os.Getenv("LITEQUEUE_GROWTH_JOBS"); env != "" {
		var err error
		if n, err = strconv.Atoi(env); err != nil || n < 1 {
			t.Fatalf("LITEQUEUE_GROWTH_JOBS=%q: want a number of jobs", env)
		}
	}
	clk := newMock()
	q, path := openGrowth(t, litequeue.Options{Clock: clk})
	start := time.Now()
	completeJobs(t, q, n)
	peak := sizesOf(t, q, path)
	t.Logf("%d jobs completed in %v: %v", n, time.Since(start).Round(time.Millisecond), peak)

	clk.Add(litequeue.DefaultKeepFinished)
	sweeps := 0
	var after fileSizes
	for {
		runDue(t, q)
		sweeps++
		after = sizesOf(t, q, path)
		if after.Free < 256 || sweeps == 100 {
			break
		}
	}
	if jobs, err := q.List(context.Background(), litequeue.Filter{}); err != nil || len(jobs) != 0 {
		t.Fatalf("%d jobs left after retention (%v), want 0", len(jobs), err)
	}
	t.Logf("after %d retention passes: %v", sweeps, after)
	if after.Pages*4 > peak.Pages {
		t.Fatalf("the file keeps %d of its peak %d pages after retention", after.Pages, peak.Pages)
	}
	enqueue(t, q, "later", nil) // the next writer starts the WAL again
	final := sizesOf(t, q, path)
	t.Logf("after one more commit: %v", final)
	if final.WAL > 4<<20 {
		t.Fatalf("the WAL keeps %s after a checkpoint emptied it, want at most 4 MiB", mib(final.WAL))
	}
	if final.DB > 1<<20 {
		t.Fatalf("the file keeps %s on disk after retention (peak %s), want at most 1 MiB", mib(final.DB), mib(peak.DB))
	}
}

// TestOpen_AutoVacuum: a file Open creates allows incremental vacuum; a file
// that already had pages (the app's own tables) keeps its setting, and the
// janitor leaves it as it is.
func TestOpen_AutoVacuum(t *testing.T) {
	fileOnly(t, "the file's pages")
	q, _ := openQueue(t, litequeue.Options{})
	var mode int
	if err := q.DB().Get(&mode, `PRAGMA auto_vacuum`); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum of a new file = %d (%v), want 2 (incremental)", mode, err)
	}
	path := filepath.Join(t.TempDir(), "app.db")
	sqliteFile(t, path, `CREATE TABLE notes (body TEXT)`)
	clk := newMock()
	app := openAt(t, path, litequeue.Options{Clock: clk})
	if err := app.DB().Get(&mode, `PRAGMA auto_vacuum`); err != nil || mode != 0 {
		t.Fatalf("auto_vacuum of an adopted file = %d (%v), want 0 (none)", mode, err)
	}
	app.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	for range 300 {
		enqueue(t, app, "k", strings.Repeat("x", 4000))
	}
	runDue(t, app)
	clk.Add(litequeue.DefaultKeepFinished)
	runDue(t, app)
	if s := sizesOf(t, app, path); s.Free < 256 {
		t.Fatalf("%v: want the purged jobs' pages free, kept in the file", s)
	}
}

// logBuffer collects a Queue's log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestQueue_WALWithHeldReader measures the WAL while another process
// inspects the file. An OpenReadOnly Queue holds no read transaction
// between calls and does not hinder checkpoints. An unclosed *sql.Rows on
// its DB() does: SQLite cannot empty the WAL while that read lasts, and
// every commit adds to it. The janitor logs a warning past 64 MiB; once
// the reader ends, the next checkpoint empties the WAL and the next writer
// cuts the file back to 4 MiB.
func TestQueue_WALWithHeldReader(t *testing.T) {
	fileOnly(t, "the WAL")
	if race {
		t.Skip("2,000 job runs take minutes under the race detector; nothing here is concurrent")
	}
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	q, path := openGrowth(t, litequeue.Options{Clock: newMock(), Logger: logger})
	completeJobs(t, q, 1000)
	t.Logf("1,000 jobs: %v", sizesOf(t, q, path))

	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	get(t, ro, 1)
	completeJobs(t, q, 2000)
	idle := sizesOf(t, q, path)
	t.Logf("2,000 more with an OpenReadOnly Queue open: %v", idle)
	if idle.WAL > 5<<20 {
		t.Fatalf("the WAL grew to %s beside an idle OpenReadOnly Queue", mib(idle.WAL))
	}
	if _, err := ro.DB().Beginx(); err == nil {
		t.Fatal("a transaction began on a read-only Queue's DB(); it would hold SQLite's write lock")
	}

	rows, err := ro.DB().Query(`SELECT id FROM litequeue_jobs`)
	if err != nil {
		t.Fatal(err)
	}
	rows.Next() // the read transaction lasts until rows is closed
	completeJobs(t, q, 2000)
	held := sizesOf(t, q, path)
	t.Logf("2,000 more while a read is held: %v (%d KiB per job)", held, (held.WAL-idle.WAL)/2000>>10)
	if held.WAL < walWarn {
		t.Fatalf("the WAL is %s while a read is held, want it past %s", mib(held.WAL), mib(walWarn))
	}
	if got := strings.Count(logs.String(), "the WAL keeps growing"); got == 0 {
		t.Fatalf("no warning logged about the growing WAL; logs:\n%s", logs.String())
	}
	rows.Close()
	enqueue(t, q, "k", nil) // its commit checkpoints: the WAL is empty
	enqueue(t, q, "k", nil) // the next writer starts it again, cut to 4 MiB
	released := sizesOf(t, q, path)
	t.Logf("after the read ended and two commits: %v", released)
	if released.WAL > 4<<20 {
		t.Fatalf("the WAL file keeps %s after the read ended, want at most 4 MiB", mib(released.WAL))
	}
}

// walWarn is the WAL size past which the janitor warns (walWarnSize).
const walWarn = 64 << 20
