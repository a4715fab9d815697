package litequeue_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestQueue_BackupDiskFull backs a file of about 7 MiB up onto a file
// system of 64 KiB (a tmpfs): Backup fails with an error naming the path,
// and leaves nothing on the file system, neither the temporary copy nor
// its -journal (the copy is larger than SQLite's page cache, so VACUUM
// INTO writes pages before its end, under a rollback journal). Mounting
// the tmpfs (see smallFS) needs root.
func TestQueue_BackupDiskFull(t *testing.T) {
	fileOnly(t, "a backup copies the file")
	t.Parallel()
	small := smallFS(t, "64k")
	q, _ := openQueue(t, litequeue.Options{})
	payloads := make([]any, 6000)
	for i := range payloads {
		payloads[i] = strings.Repeat("x", 1000)
	}
	if _, err := q.EnqueueMany(t.Context(), "send", payloads); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(small, "copy.db")
	for _, overwrite := range []bool{false, true} {
		err := q.Backup(t.Context(), to, litequeue.BackupOptions{Overwrite: overwrite})
		if err == nil || !strings.Contains(err.Error(), to) {
			t.Fatalf("Backup onto a full disk, overwrite %v: %v; want an error naming %s", overwrite, err, to)
		}
		t.Logf("overwrite %v: %v", overwrite, err)
		if left := dirNames(t, small); len(left) > 0 {
			t.Errorf("after the failed backup, overwrite %v, the file system holds %q", overwrite, left)
		}
	}
}
