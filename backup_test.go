package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestQueue_Backup takes a backup while 4 goroutines enqueue and a Work
// runs: the copy is sound, in journal mode delete, mode 0600, and holds
// every job whose Enqueue had returned before the backup began, each with
// a history that agrees with its state.
func TestQueue_Backup(t *testing.T) {
	fileOnly(t, "a backup copies the file")
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("task", func(ctx context.Context, job *litequeue.Job) error {
		var n int
		if err := job.Decode(&n); err != nil {
			return err
		}
		if n%3 == 0 {
			return litequeue.Permanent(errors.New("a third of the tasks fail"))
		}
		return nil
	})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	worked := make(chan error, 1)
	go func() { worked <- q.Work(ctx, litequeue.WorkerOptions{Concurrency: 4}) }()

	var mu sync.Mutex
	var acked []int64
	var enqueuers sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		enqueuers.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				j, err := q.Enqueue(ctx, "task", g*1_000_000+i)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked = append(acked, j.ID)
				mu.Unlock()
			}
		})
	}
	ackedNow := func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(acked)
	}
	waitFor(t, "200 acknowledged enqueues", func() bool { return len(ackedNow()) >= 200 })
	before := ackedNow()
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := q.Backup(t.Context(), backup, litequeue.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "enqueues after the backup", func() bool { return len(ackedNow()) > len(before)+50 })
	stop()
	enqueuers.Wait()
	if err := <-worked; err != nil {
		t.Fatalf("Work: %v", err)
	}
	close(errs)
	for err := range errs {
		t.Fatalf("Enqueue: %v", err)
	}

	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 && runtime.GOOS != "windows" {
		t.Fatalf("the backup: %v, mode %v; want mode 0600", err, fi.Mode())
	}
	b := openReadOnly(t, backup)
	h, err := b.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !h.OK() || !h.Backup || h.JournalMode != "delete" || len(h.Warnings) != 0 || !slices.Equal(h.Integrity, []string{"ok"}) {
		t.Fatalf("health of the backup: ok %v, backup %v, journal mode %q, integrity %q, problems %q, warnings %q",
			h.OK(), h.Backup, h.JournalMode, h.Integrity, h.Problems, h.Warnings)
	}
	for _, id := range before {
		if _, err := b.Get(t.Context(), id); err != nil {
			t.Fatalf("job %d, acknowledged before the backup began, is not in it: %v", id, err)
		}
	}
	jobs, err := b.List(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	finished := 0
	for _, j := range jobs {
		hist, err := b.History(t.Context(), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := historyAgrees(j, hist); err != nil {
			t.Fatalf("job %d in the backup: %v", j.ID, err)
		}
		if j.State == litequeue.Completed || j.State == litequeue.Dead {
			finished++
		}
	}
	t.Logf("%d jobs acknowledged before the backup, %d in it, %d of them finished", len(before), len(jobs), finished)
}

// historyAgrees reports how a job's history contradicts its state, if it
// does: a copy made of a state from one transaction and a history from
// another would.
func historyAgrees(j *litequeue.Job, hist []litequeue.Attempt) error {
	var last litequeue.Outcome
	if len(hist) > 0 {
		last = hist[len(hist)-1].Outcome
	}
	switch j.State {
	case litequeue.Completed:
		if last != litequeue.OutcomeCompleted {
			return fmt.Errorf("completed, with last outcome %q", last)
		}
	case litequeue.Dead:
		if last != litequeue.OutcomeFailed {
			return fmt.Errorf("dead, with last outcome %q", last)
		}
	case litequeue.Pending:
		if len(hist) != 0 {
			return fmt.Errorf("pending, with %d runs", len(hist))
		}
	case litequeue.Running:
		if len(hist) != 0 || j.Attempt != 1 {
			return fmt.Errorf("running attempt %d, with %d runs before it", j.Attempt, len(hist))
		}
	default:
		return fmt.Errorf("in state %s", j.State)
	}
	return nil
}

// TestQueue_BackupOpens: Open takes a backup back into use, in WAL, with
// its jobs.
func TestQueue_BackupOpens(t *testing.T) {
	fileOnly(t, "a backup copies the file")
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	j := enqueue(t, q, "send", "ada")
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := q.Backup(t.Context(), backup, litequeue.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	restored := openAt(t, backup, litequeue.Options{})
	got, err := restored.Get(t.Context(), j.ID)
	if err != nil || string(got.Payload) != `"ada"` {
		t.Fatalf("Get(%d) of the restored file: %+v, %v", j.ID, got, err)
	}
	next := enqueue(t, restored, "send", "grace")
	if next.ID <= j.ID {
		t.Errorf("a job enqueued after the restore has ID %d, not after %d", next.ID, j.ID)
	}
	h, err := restored.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.JournalMode != "wal" || h.Backup {
		t.Errorf("the restored file in use: journal mode %q, backup %v; want wal, false", h.JournalMode, h.Backup)
	}
}

// TestQueue_BackupRefuses: an existing file is left as it was unless
// Overwrite, the queue's own files never are written, and an error names
// the path and leaves nothing behind.
func TestQueue_BackupRefuses(t *testing.T) {
	fileOnly(t, "a backup copies the file")
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	enqueue(t, q, "send", nil)
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.db")
	if err := os.WriteFile(existing, []byte("yesterday's backup"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := q.Backup(t.Context(), existing, litequeue.BackupOptions{})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), existing) {
		t.Fatalf("Backup over an existing file: %v; want fs.ErrExist, naming %s", err, existing)
	}
	if data, err := os.ReadFile(existing); err != nil || string(data) != "yesterday's backup" {
		t.Fatalf("the refused file now holds %q (%v)", data, err)
	}
	for _, own := range []string{path, path + "-wal", path + "-shm", path + "-lock"} {
		for _, overwrite := range []bool{false, true} {
			err := q.Backup(t.Context(), own, litequeue.BackupOptions{Overwrite: overwrite})
			if err == nil || !strings.Contains(err.Error(), "the queue's") || !strings.Contains(err.Error(), own) {
				t.Errorf("Backup to %s, overwrite %v: %v; want a refusal naming it", own, overwrite, err)
			}
		}
	}
	if err := q.Backup(t.Context(), filepath.Join(filepath.Dir(path), ".", filepath.Base(path)), litequeue.BackupOptions{Overwrite: true}); err == nil {
		t.Error("Backup to the queue's file by another name succeeded")
	}
	if runtime.GOOS != "windows" {
		link := filepath.Join(dir, "link.db")
		if err := os.Link(path, link); err != nil {
			t.Fatal(err)
		}
		if err := q.Backup(t.Context(), link, litequeue.BackupOptions{Overwrite: true}); err == nil || !strings.Contains(err.Error(), "the queue's own file") {
			t.Errorf("Backup over a hard link to the queue's file: %v; want a refusal", err)
		}
	}
	missingDir := filepath.Join(dir, "no", "such", "dir", "b.db")
	if err := q.Backup(t.Context(), missingDir, litequeue.BackupOptions{}); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missingDir) {
		t.Errorf("Backup into a missing directory: %v; want ErrNotExist naming %s", err, missingDir)
	}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := q.Backup(cancelled, filepath.Join(dir, "cancelled.db"), litequeue.BackupOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Backup with a cancelled context: %v", err)
	}
	if err := q.Backup(t.Context(), "", litequeue.BackupOptions{}); err == nil {
		t.Error("Backup to an empty path succeeded")
	}
	names := dirNames(t, dir)
	if want := []string{"link.db", "old.db"}; runtime.GOOS == "windows" && !slices.Equal(names, want[1:]) || runtime.GOOS != "windows" && !slices.Equal(names, want) {
		t.Errorf("after the failed backups the directory holds %q, want only what was there", names)
	}

	if err := q.Backup(t.Context(), existing, litequeue.BackupOptions{Overwrite: true}); err != nil {
		t.Fatalf("Backup with Overwrite: %v", err)
	}
	fi, err := os.Stat(existing)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the overwritten file has mode %v, want 0600", fi.Mode())
	}
	if h := health(t, openReadOnly(t, existing)); !h.OK() || !h.Backup || h.Jobs[litequeue.Pending] != 1 {
		t.Errorf("the overwritten file: ok %v, backup %v, jobs %v", h.OK(), h.Backup, h.Jobs)
	}

	q.Close()
	if err := q.Backup(t.Context(), filepath.Join(dir, "closed.db"), litequeue.BackupOptions{}); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("Backup after Close: %v, want ErrClosed", err)
	}
}

// dirNames returns the names in the directory, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestQueue_BackupReadOnly backs up through a Queue from OpenReadOnly,
// whose reads refuse writes before and after.
func TestQueue_BackupReadOnly(t *testing.T) {
	fileOnly(t, "a backup copies the file")
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	enqueue(t, q, "send", nil)
	ro := openReadOnly(t, path)
	ro.DB().SetMaxOpenConns(1) // the pool of ro's reads: Backup uses its one connection
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := ro.Backup(t.Context(), backup, litequeue.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	if h := health(t, openReadOnly(t, backup)); !h.OK() || !h.Backup || h.Jobs[litequeue.Pending] != 1 {
		t.Errorf("the backup: ok %v, backup %v, jobs %v", h.OK(), h.Backup, h.Jobs)
	}
	if _, err := ro.DB().Exec(`CREATE TABLE app_notes (note TEXT)`); err == nil {
		t.Error("after Backup, the read-only Queue's connection writes")
	}
}

// TestQueue_HealthPermissions: check warns of a database file or -wal
// that users other than the owner can read, and says how to fix it.
func TestQueue_HealthPermissions(t *testing.T) {
	fileOnly(t, "the modes of the file and its -wal")
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix file modes")
	}
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	enqueue(t, q, "send", nil)
	if h := health(t, q); len(h.Warnings) != 0 {
		t.Fatalf("warnings on a file Open made: %q", h.Warnings)
	}
	for _, tt := range []struct {
		file string
		mode fs.FileMode
		can  string
	}{
		{path, 0o644, "read"},
		{path + "-wal", 0o640, "read"},
		{path, 0o620, "write"},
		{path + "-wal", 0o666, "read and write"},
	} {
		if err := os.Chmod(tt.file, tt.mode); err != nil {
			t.Fatal(err)
		}
		h := health(t, q)
		want := fmt.Sprintf("%s has mode %04o: users other than its owner can %s it", tt.file, tt.mode, tt.can)
		if len(h.Warnings) != 1 || !strings.HasPrefix(h.Warnings[0], want) || !strings.HasSuffix(h.Warnings[0], ": chmod 600 "+tt.file) || !h.OK() {
			t.Errorf("mode %04o on %s: warnings %q, problems %q; want one saying %q and chmod 600", tt.mode, tt.file, h.Warnings, h.Problems, want)
		}
		if err := os.Chmod(tt.file, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if h := health(t, q); len(h.Warnings) != 0 {
		t.Errorf("warnings after chmod 600: %q", h.Warnings)
	}
}

// TestQueue_HealthPermissionsQuoted: the chmod that Health suggests can be
// pasted into a shell: a path that needs quoting is quoted.
func TestQueue_HealthPermissionsQuoted(t *testing.T) {
	fileOnly(t, "the modes of the file and its -wal")
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix file modes")
	}
	t.Parallel()
	dir := t.TempDir()
	for name, want := range map[string]string{
		"jobs=1.db":    "chmod 600 " + filepath.Join(dir, "jobs=1.db"),
		"my jobs.db":   "chmod 600 '" + filepath.Join(dir, "my jobs.db") + "'",
		"it's jobs.db": "chmod 600 '" + filepath.Join(dir, `it'\''s jobs.db`) + "'",
	} {
		path := filepath.Join(dir, name)
		q := openAt(t, path, litequeue.Options{})
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if h := health(t, q); len(h.Warnings) != 1 || !strings.HasSuffix(h.Warnings[0], ": "+want) {
			t.Errorf("%s: warnings %q; want one ending in %q", name, h.Warnings, want)
		}
	}
}

// TestQueue_BackupServer: a Queue on a server has no file to copy, and
// says so.
func TestQueue_BackupServer(t *testing.T) {
	if !onPostgres {
		t.Skip("the suite runs on the file (LITEQUEUE_TEST_BACKEND=postgres runs it on a server)")
	}
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	to := filepath.Join(t.TempDir(), "copy.db")
	if err := q.Backup(t.Context(), to, litequeue.BackupOptions{}); err == nil || !strings.Contains(err.Error(), "no file to copy") {
		t.Errorf("Backup on a server: %v; want an error saying it has no file", err)
	}
	if _, err := os.Stat(to); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Backup on a server made %s: %v", to, err)
	}
}
