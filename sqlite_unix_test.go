//go:build unix

package litequeue_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestQueue_WALWithHeldReader measures the WAL while another process
// inspects the file. An OpenReadOnly Queue holds no read transaction
// between calls and does not hinder checkpoints. An unclosed *sql.Rows on
// its DB() does: SQLite cannot empty the WAL while that read lasts, and
// every commit adds to it. The janitor logs a warning past 64 MiB; once
// the reader ends, the next checkpoint empties the WAL and the next writer
// cuts the file back to 4 MiB.
func TestQueue_WALWithHeldReader(t *testing.T) {
	fileOnly(t, "the WAL")
	t.Parallel()
	if race {
		t.Skip("2,000 job runs take minutes under the race detector; nothing here is concurrent")
	}
	var logs output
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
	// As many jobs as it takes to pass walWarn (about 2,000 at 30 KiB a
	// job) and have the warning logged, up to 10,000.
	var held fileSizes
	n := 0
	for n < 10_000 && (held.WAL < walWarn || !strings.Contains(logs.String(), "the WAL keeps growing")) {
		completeJobs(t, q, 500)
		n += 500
		held = sizesOf(t, q, path)
	}
	t.Logf("%d more while a read is held: %v (%d KiB per job)", n, held, (held.WAL-idle.WAL)/int64(n)>>10)
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
