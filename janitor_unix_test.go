//go:build unix

package litequeue_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// The growth tests, TestQueue_GrowthAndRetention here, and
// TestQueue_WALWithHeldReader (sqlite_unix_test.go) and TestOpen_AutoVacuum
// (migrate_unix_test.go), measure the file and its WAL as jobs come and go.
// They run with Synchronous "normal" (sizes do not depend on it; time
// does). Set LITEQUEUE_SOAK=1 for the 100,000-job run, or
// LITEQUEUE_GROWTH_JOBS=N for a run of N jobs (1000000: about ten minutes
// on two cores).

// TestQueue_GrowthAndRetention completes 10,000 jobs (100,000 with
// LITEQUEUE_SOAK=1, N with LITEQUEUE_GROWTH_JOBS=N), lets retention purge
// them, and checks that the file does not keep its peak size: the janitor
// gives the free pages back (auto_vacuum=INCREMENTAL), and the WAL file is
// cut back to 4 MiB when it starts again.
func TestQueue_GrowthAndRetention(t *testing.T) {
	fileOnly(t, "the file's pages")
	t.Parallel()
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
	if jobs, err := q.List(t.Context(), litequeue.Filter{}); err != nil || len(jobs) != 0 {
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
