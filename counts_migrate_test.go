package litequeue_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// epochMS is epoch in Unix ms, for jobs written by SQL.
var epochMS = epoch.UnixMilli()

// manyJobsSQL inserts n jobs of a file of version 5 or newer, in every
// state, across three queues and five kinds; a third of the pending ones
// are scheduled after epoch, the others due before it.
func manyJobsSQL(n int) string {
	return fmt.Sprintf(`WITH RECURSIVE i(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM i WHERE x < %d)
	INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, run_at, created_at, finished_at)
	SELECT 'q' || (x %% 3), 'k' || (x %% 5), X'7b7d',
		CASE x %% 7 WHEN 0 THEN 'completed' WHEN 1 THEN 'dead' WHEN 2 THEN 'running' WHEN 3 THEN 'cancelled' ELSE 'pending' END,
		8, %d + CASE WHEN x %% 3 = 0 THEN 60000 ELSE -x END, %d,
		CASE WHEN x %% 7 IN (0, 1, 3) THEN %d END
	FROM i`, n, epochMS, epochMS, epochMS)
}

// readOnlyStats reads the Stats of the file at path with OpenReadOnly at
// epoch: of a file of version 5, by a scan of its jobs.
func readOnlyStats(t *testing.T, path string) litequeue.Stats {
	t.Helper()
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{Clock: newMock()})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	s, err := ro.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkRecount fails the test unless a recount of the jobs of q finds
// every kept count right.
func checkRecount(t *testing.T, q *litequeue.Queue, step string) {
	t.Helper()
	if changed, err := q.RecountJobs(t.Context()); err != nil || changed != 0 {
		t.Errorf("%s: RecountJobs = %d, %v; want 0 counts changed", step, changed, err)
	}
}

// checkStatsAsScanned fails the test unless the Stats of q equal
// scanned, those of a scan of its jobs, and a recount finds every kept
// count right.
func checkStatsAsScanned(t *testing.T, q *litequeue.Queue, scanned litequeue.Stats, step string) {
	t.Helper()
	kept, err := q.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(scanned, kept); diff != "" {
		t.Errorf("%s: Stats from the counts differ from those of a scan (-scan +counts):\n%s", step, diff)
	}
	checkRecount(t, q, step)
}

// TestOpen_MigratesVersion5Counts opens a file of version 5 with jobs in
// every state: Open counts them in its migration, and the Stats read from
// the counts equal those that OpenReadOnly read by a scan before; the
// jobs and the history are as they were; a recount finds every count
// right, also after writes.
func TestOpen_MigratesVersion5Counts(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	t.Parallel()
	path := oldFile(t, 5)
	sqliteFile(t, path, manyJobsSQL(2000))
	before := dumpFile(t, path)
	scanned := readOnlyStats(t, path)
	if q0, q1 := scanned.Queues["q0"], scanned.Queues["q1"]; q0.Scheduled == 0 || q1.Due == 0 || q1.OldestDue <= 0 || q1.Dead == 0 {
		t.Fatalf("the file's figures lack a state to compare: %+v", scanned.Queues)
	}
	q := openAt(t, path, litequeue.Options{Clock: newMock()})
	if diff := cmp.Diff(withDependents(before), dumpFile(t, path)); diff != "" {
		t.Errorf("rows changed by the migration (-before +after):\n%s", diff)
	}
	checkStatsAsScanned(t, q, scanned, "after the migration")
	enqueue(t, q, "k1", nil)
	if n, err := q.PurgeDead(t.Context(), 0); err != nil || n == 0 {
		t.Fatalf("PurgeDead = %d, %v; want the dead jobs purged", n, err)
	}
	checkRecount(t, q, "after an enqueue and a purge")
}
