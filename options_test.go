package litequeue_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestOptions_Checkpoint: with Checkpoint "off" nothing of litequeue's
// checkpoints: the database file stays as Open left it while the -wal
// takes every commit, the janitor's vacuum included. With "auto" (and
// "") checkpoints copy the commits into the database file, and the -wal
// holds at most what came after the last one: 4 MiB, plus the largest
// transaction (the vacuum's 2048 pages, 8 MiB, and its pointer maps).
func TestOptions_Checkpoint(t *testing.T) {
	fileOnly(t, "checkpoints are the file's")
	t.Parallel()
	const jobs, payload = 300, 32 << 10 // 9.4 MiB of payloads
	for _, checkpoint := range []string{"", "auto", "off"} {
		t.Run("checkpoint="+checkpoint, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q, path := openQueue(t, litequeue.Options{Clock: clk, Checkpoint: checkpoint, KeepFinished: time.Hour})
			var auto int
			if err := q.DB().Get(&auto, `PRAGMA wal_autocheckpoint`); err != nil {
				t.Fatal(err)
			}
			want := 1000 // SQLite's default
			if checkpoint == "off" {
				want = 0
			}
			if auto != want {
				t.Errorf("wal_autocheckpoint on DB() is %d, want %d", auto, want)
			}
			opened := fileBytes(t, path)
			q.Handle("blob", func(context.Context, *litequeue.Job) error { return nil })
			for range jobs {
				enqueue(t, q, "blob", make([]byte, payload))
			}
			if _, err := q.RunDue(t.Context()); err != nil {
				t.Fatal(err)
			}
			var before int
			if err := q.DB().Get(&before, `PRAGMA page_count`); err != nil {
				t.Fatal(err)
			}
			clk.Add(2 * time.Hour) // past KeepFinished: RunDue's janitor purges, then vacuums
			if _, err := q.RunDue(t.Context()); err != nil {
				t.Fatal(err)
			}
			var after int
			if err := q.DB().Get(&after, `PRAGMA page_count`); err != nil {
				t.Fatal(err)
			}
			if after >= before {
				t.Fatalf("the janitor did not vacuum: %d pages before, %d after", before, after)
			}
			file, wal := fileBytes(t, path), fileBytes(t, path+"-wal")
			t.Logf("database file %d bytes after Open, %d now; -wal %d bytes", opened, file, wal)
			if checkpoint == "off" {
				if file != opened || wal < jobs*payload {
					t.Errorf("checkpoint off: the database file went from %d to %d bytes, the -wal is %d; want no change, and every commit in the -wal", opened, file, wal)
				}
			} else if file == opened || wal > 16<<20 {
				t.Errorf("checkpoint %q: the database file went from %d to %d bytes, the -wal is %d; want checkpoints, and a -wal under 16 MiB", checkpoint, opened, file, wal)
			}
		})
	}
}

// fileBytes returns the size of the file at path.
func fileBytes(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}
