package litequeue_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_Health checks the report on a sound file, through the Queue
// that works on it and through a read-only one beside it.
func TestQueue_Health(t *testing.T) {
	fileOnly(t, "the file's health")
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.Permanent(errors.New("bad address"))
	})
	enqueue(t, q, "send", "dies")
	later := enqueue(t, q, "later", nil, litequeue.Delay(time.Hour))
	enqueue(t, q, "after", nil, litequeue.DependsOn(later.ID)) // waiting: not a state the check calls unknown
	runDue(t, q)
	mark(t, q, "order 42 charged", time.Hour)
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for name, q := range map[string]*litequeue.Queue{"Open": q, "OpenReadOnly": ro} {
		h, err := q.Health(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !h.OK() || len(h.Warnings) != 0 {
			t.Errorf("%s: problems %q, warnings %q; want none", name, h.Problems, h.Warnings)
		}
		if diff := cmp.Diff([]string{"ok"}, h.Integrity); diff != "" {
			t.Errorf("%s: Integrity (-want +got):\n%s", name, diff)
		}
		if h.SchemaVersion < 1 || h.ApplicationID != 0x4c515545 || h.JournalMode != "wal" || h.FileBytes == 0 {
			t.Errorf("%s: schema version %d, application_id %#x, journal mode %q, %d bytes",
				name, h.SchemaVersion, h.ApplicationID, h.JournalMode, h.FileBytes)
		}
		wantJobs := map[litequeue.State]int{litequeue.Pending: 1, litequeue.Dead: 1, litequeue.Waiting: 1,
			litequeue.Running: 0, litequeue.Completed: 0, litequeue.Discarded: 0, litequeue.Cancelled: 0, litequeue.Expired: 0}
		if diff := cmp.Diff(wantJobs, h.Jobs); diff != "" {
			t.Errorf("%s: Jobs (-want +got):\n%s", name, diff)
		}
		if h.HistoryRows != 1 || h.Keys != 1 {
			t.Errorf("%s: %d history rows, %d keys; want 1 and 1", name, h.HistoryRows, h.Keys)
		}
	}
}

// TestQueue_HealthCorrupt damages a page of the file, as a failing disk
// might: the report says what is wrong instead of failing.
func TestQueue_HealthCorrupt(t *testing.T) {
	fileOnly(t, "the file's health")
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	for range 50 {
		enqueue(t, q, "send", strings.Repeat("x", 1000))
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The b-tree header of the last page.
	const page = 4096
	for i := len(data) - page + 1; i < len(data)-page+8; i++ {
		data[i] = 0xa5
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	h, err := ro.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.OK() || !strings.HasPrefix(h.Problems[0], "integrity_check") {
		t.Errorf("problems %q; want integrity_check's first", h.Problems)
	}
}

// TestQueue_HealthBackup: a VACUUM INTO backup is sound, in journal mode
// delete: a Backup, neither a warning nor a problem.
func TestQueue_HealthBackup(t *testing.T) {
	fileOnly(t, "the file's health")
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	enqueue(t, q, "send", nil)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if _, err := q.DB().Exec(q.DB().Rebind(`VACUUM INTO ?`), backup); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(backup, 0o600); err != nil { // VACUUM INTO makes it 0644
		t.Fatal(err)
	}
	ro, err := litequeue.OpenReadOnly(backup, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	h, err := ro.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !h.OK() || h.JournalMode != "delete" || !h.Backup || len(h.Warnings) != 0 {
		t.Errorf("problems %q, journal mode %q, backup %v, warnings %q", h.Problems, h.JournalMode, h.Backup, h.Warnings)
	}
	if h := health(t, q); h.Backup {
		t.Error("the file in use is reported as a backup")
	}
}

// TestQueue_HealthDeletedWAL deletes the -wal of a file an app has open:
// opening the file read-only, or its report, says what happened and what
// to do.
func TestQueue_HealthDeletedWAL(t *testing.T) {
	fileOnly(t, "the file's health")
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	enqueue(t, q, "send", strings.Repeat("x", 4000))
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		if litequeue.ExplainShortRead(err) == "" {
			t.Fatalf("OpenReadOnly: %v, with no explanation", err)
		}
		return
	}
	defer ro.Close()
	h, err := ro.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.OK() || !strings.Contains(h.Problems[0], "stop the app cleanly") {
		t.Errorf("problems %q; want the explanation first", h.Problems)
	}
	if got := litequeue.ExplainShortRead(errors.New("disk full")); got != "" {
		t.Errorf("ExplainShortRead of another error: %q, want none", got)
	}
}

// health returns q's Health, failing the test on error.
func health(tb testing.TB, q *litequeue.Queue) *litequeue.Health {
	tb.Helper()
	h, err := q.Health(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
