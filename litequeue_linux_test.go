//go:build linux

package litequeue_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/litequeue/litequeue"
)

// These tests give Open files and places it cannot use — a read-only file,
// a read-only directory, a missing directory, a directory for a file, a
// full disk — and check for a clear error, never a panic and never a
// half-written job. litequeue_test.go has the files Open refuses by content.
// As root, permission bits do not stop a write, so the tests use what does:
// the immutable attribute, a read-only bind mount, a small tmpfs.

// fsImmutable is FS_IMMUTABLE_FL from linux/fs.h: not even root may write
// or rename the file.
const fsImmutable = 0x10

// makeReadOnly makes the file unwritable for this process until the test
// ends: mode 0400, or as root the immutable attribute.
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o400); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags|fsImmutable))
	}
	if err != nil {
		t.Skipf("running as root and the file system cannot make a file immutable (%v): no way to make it read-only", err)
	}
	t.Cleanup(func() {
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags)); err != nil {
			t.Errorf("clear the immutable attribute: %v", err)
		}
	})
}

// readOnlyDir returns a read-only view of dir until the test ends: dir
// itself with mode 0500, or as root a read-only bind mount of it.
func readOnlyDir(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		return dir
	}
	view := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(view, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dir, view, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("running as root and cannot bind-mount (%v): no way to make a directory read-only", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(view, 0); err != nil {
			t.Errorf("unmount %s: %v", view, err)
		}
	})
	if err := unix.Mount("", view, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount the bind mount read-only: %v", err)
	}
	return view
}

// queueFile creates a litequeue file in dir with one job and closes it.
func queueFile(t *testing.T, dir string) (path string, id int64) {
	t.Helper()
	path = filepath.Join(dir, "q.db")
	q := openAt(t, path, litequeue.Options{})
	id = enqueue(t, q, "k", "hello").ID
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	return path, id
}

// openFails calls Open, which must fail with an error that contains each
// of want.
func openFails(t *testing.T, path string, want ...string) {
	t.Helper()
	q, err := litequeue.Open(path, litequeue.Options{})
	if err == nil {
		q.Close()
		t.Fatalf("Open(%s) succeeded, want an error", path)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("Open: %v\nwant an error containing %q", err, w)
		}
	}
	t.Logf("Open: %v", err)
}

// checkInspectable opens path with OpenReadOnly and finds job id in it.
func checkInspectable(t *testing.T, path string, id int64) {
	t.Helper()
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatalf("OpenReadOnly: %v", err)
	}
	defer ro.Close()
	if got := get(t, ro, id); string(got.Payload) != `"hello"` {
		t.Fatalf("read-only Get = %+v", got)
	}
}

func TestOpen_Directory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openFails(t, dir, dir, "is a directory")
	if _, err := litequeue.OpenReadOnly(dir, litequeue.Options{}); err == nil {
		t.Fatal("OpenReadOnly of a directory succeeded")
	}
}

func TestOpen_MissingDirectory(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no", "such")
	path := filepath.Join(missing, "q.db")
	_, err := litequeue.Open(path, litequeue.Options{})
	if !errors.Is(err, os.ErrNotExist) || strings.Count(err.Error(), path) != 1 {
		t.Fatalf("Open: %v, want ErrNotExist naming %s once", err, path)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created the directory: %v", err)
	}
}

// TestOpen_ReadOnlyFile: Open refuses a file it may not write, saying so,
// and leaves it as it was; OpenReadOnly still inspects it.
func TestOpen_ReadOnlyFile(t *testing.T) {
	fileOnly(t, "file modes")
	t.Parallel()
	path, id := queueFile(t, t.TempDir())
	makeReadOnly(t, path)
	before := readFile(t, path)
	openFails(t, path, path, "not writable")
	if after := readFile(t, path); !bytes.Equal(before, after) {
		t.Fatal("the read-only file was changed")
	}
	checkInspectable(t, path, id)
}

// TestOpen_ReadOnlyDirectory: neither a new file nor an existing one in a
// read-only directory opens for writing (SQLite needs its -wal and -shm,
// and litequeue its -lock, beside the file). OpenReadOnly inspects a file
// that was closed cleanly there, and refuses, with an error that says why,
// one whose -wal is still beside it: reading the file without its -wal
// would show an old state.
func TestOpen_ReadOnlyDirectory(t *testing.T) {
	fileOnly(t, "file modes")
	t.Parallel()
	dir := t.TempDir()
	_, id := queueFile(t, dir)
	view := readOnlyDir(t, dir)
	openFails(t, filepath.Join(view, "new.db"), "new.db")
	if _, err := os.Stat(filepath.Join(view, "new.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file was created in the read-only directory: %v", err)
	}
	openFails(t, filepath.Join(view, "q.db"), "q.db")
	checkInspectable(t, filepath.Join(view, "q.db"), id)

	// A copy taken while a writer had the file open: its last enqueue is
	// in the -wal only.
	live := t.TempDir()
	q := openAt(t, filepath.Join(live, "q.db"), litequeue.Options{})
	enqueue(t, q, "k", "in the wal")
	copied := t.TempDir()
	for _, name := range []string{"q.db", "q.db-wal"} {
		if err := os.WriteFile(filepath.Join(copied, name), readFile(t, filepath.Join(live, name)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	view = readOnlyDir(t, copied)
	ro, err := litequeue.OpenReadOnly(filepath.Join(view, "q.db"), litequeue.Options{})
	if err == nil {
		ro.Close()
		t.Fatal("OpenReadOnly read a file without its -wal")
	}
	if !strings.Contains(err.Error(), "-wal and -shm") {
		t.Fatalf("OpenReadOnly: %v, want an error about the -wal and -shm", err)
	}
	t.Logf("OpenReadOnly: %v", err)
}

// smallFS mounts a tmpfs of the given size for the test, or skips the test
// when it cannot (not root, or no mount permission), saying why.
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a size-limited tmpfs for a full disk")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a size-limited tmpfs (%v): no full disk to test", err)
	}
	t.Cleanup(func() {
		// MNT_DETACH: a child that another test is starting holds a copy
		// of this process's descriptors until it execs, and would make
		// the file system busy for a moment (a long one under qemu-user).
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// TestQueue_DiskFull fills a 1 MiB file system: every Enqueue that
// returned nil is in the file, every one that returned an error is not, no
// call panics, RunDue reports the error, and once space comes back the
// file passes integrity_check, takes new jobs, runs them all and opens
// again.
func TestQueue_DiskFull(t *testing.T) {
	t.Parallel()
	dir := smallFS(t, "4m")
	// Ballast, deleted later to give the space back: the file system has
	// about 1 MiB free.
	ballast := filepath.Join(dir, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "q.db")
	clk := newMock()
	q, err := litequeue.Open(path, litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatalf("Open on the small file system: %v", err)
	}
	defer q.Close()
	var ran []int
	q.Handle("k", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, p payload) error {
		ran = append(ran, p.Seq)
		return nil
	}))
	ctx := t.Context()
	acked := map[int]bool{}
	var fullErr error
	failures, seq := 0, 0
	for ; seq < 2000 && failures < 20; seq++ {
		_, err := q.Enqueue(ctx, "k", payload{Seq: seq, Pad: strings.Repeat("x", 3000)})
		switch {
		case err == nil:
			acked[seq] = true
		case fullErr == nil:
			fullErr = err
			fallthrough
		default:
			failures++
		}
	}
	if fullErr == nil {
		t.Fatalf("%d enqueues of 3 KB fit in 1 MiB: the file system is not full", seq)
	}
	if !strings.Contains(fullErr.Error(), "full") {
		t.Errorf("first error on a full disk: %v, want one that says the disk is full", fullErr)
	}
	t.Logf("%d enqueues acknowledged, %d refused; first error: %v", len(acked), failures, fullErr)
	if _, err := q.RunDue(ctx); err == nil {
		t.Log("RunDue succeeded on the full disk")
	} else {
		t.Logf("RunDue on the full disk: %v", err)
		if !strings.HasPrefix(err.Error(), "litequeue: ") || !strings.Contains(err.Error(), "full") {
			t.Errorf("RunDue on the full disk: %v, want a litequeue error saying the disk is full", err)
		}
	}
	checkJobs(t, q, acked)

	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	var check string
	if err := q.DB().Get(&check, `PRAGMA integrity_check`); err != nil || check != "ok" {
		t.Fatalf("integrity_check after space came back = %q, %v", check, err)
	}
	if _, err := q.Enqueue(ctx, "k", payload{Seq: seq}); err != nil {
		t.Fatalf("Enqueue after space came back: %v", err)
	}
	acked[seq] = true
	// The run whose outcome could not be recorded comes back when its
	// lease expires, as after a crash.
	for range 5 {
		runDue(t, q)
		clk.Add(time.Minute)
	}
	checkJobs(t, q, acked)
	done, err := q.List(ctx, litequeue.Filter{State: litequeue.Completed})
	if err != nil || len(done) != len(acked) {
		t.Fatalf("%d jobs completed (%v), want all %d", len(done), err, len(acked))
	}
	t.Logf("%d handler runs for %d jobs", len(ran), len(acked))
	if err := q.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	q2, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatalf("Open after the disk was full: %v", err)
	}
	defer q2.Close()
	checkJobs(t, q2, acked)
}

// payload is a job's payload in TestQueue_DiskFull.
type payload struct {
	Seq int    `json:"seq"`
	Pad string `json:"pad,omitempty"`
}

// checkJobs fails the test unless the file holds exactly the acknowledged
// jobs, each once.
func checkJobs(t *testing.T, q *litequeue.Queue, acked map[int]bool) {
	t.Helper()
	jobs, err := q.List(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int]bool{}
	for _, j := range jobs {
		var p payload
		if err := j.Decode(&p); err != nil {
			t.Fatalf("job %d: %v", j.ID, err)
		}
		if stored[p.Seq] {
			t.Errorf("enqueue %d stored twice", p.Seq)
		}
		stored[p.Seq] = true
		if !acked[p.Seq] {
			t.Errorf("enqueue %d returned an error, yet its job %d is in the file", p.Seq, j.ID)
		}
	}
	for s := range acked {
		if !stored[s] {
			t.Errorf("enqueue %d returned nil, yet its job is not in the file", s)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// noSideFiles fails the test if SQLite's -wal or -shm, or litequeue's
// -lock, is beside path.
func noSideFiles(t *testing.T, path string, sides ...string) {
	t.Helper()
	for _, side := range sides {
		if _, err := os.Lstat(path + side); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is there after the refusal (%v)", filepath.Base(path+side), err)
		}
	}
}

// TestOpen_UnwritableLockFile: a -lock file that Open cannot open makes
// it fail before it writes anything: an app's file is left byte for byte
// as it was (not switched to WAL, no litequeue tables), and a missing
// file is not created.
func TestOpen_UnwritableLockFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "app.db")
	sqliteFile(t, path, `CREATE TABLE notes (body TEXT)`, `INSERT INTO notes VALUES ('hello')`)
	if err := os.WriteFile(path+"-lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	makeReadOnly(t, path+"-lock")
	before := readFile(t, path)
	openFails(t, path, path, "write lock")
	if after := readFile(t, path); !bytes.Equal(before, after) {
		t.Error("the app's file was changed before Open failed on its -lock")
	}
	noSideFiles(t, path, "-wal", "-shm")

	missing := filepath.Join(dir, "new.db")
	if err := os.WriteFile(missing+"-lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	makeReadOnly(t, missing+"-lock")
	openFails(t, missing, missing, "write lock")
	noSideFiles(t, missing, "", "-wal", "-shm")
}

// TestOpen_NotRegularFile: a FIFO, a device or a socket as the database,
// and a FIFO as its -lock, are refused at once, before anything reads
// them: reading a FIFO would block Open forever.
func TestOpen_NotRegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.db")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock.db")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lockFIFO := filepath.Join(dir, "q.db")
	if err := unix.Mkfifo(lockFIFO+"-lock", 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string
		readOnly   bool
	}{
		{fifo, "it is a named pipe (FIFO), not a database file", false},
		{fifo, "it is a named pipe (FIFO), not a database file", true},
		{os.DevNull, "it is a device, not a database file", false},
		{os.DevNull, "it is a device, not a database file", true},
		{sock, "it is a socket, not a database file", false},
		{lockFIFO, "open write lock q.db-lock: it is a named pipe (FIFO), not a regular file", false},
	} {
		open := litequeue.Open
		if tt.readOnly {
			open = litequeue.OpenReadOnly
		}
		done := make(chan error, 1)
		go func() {
			q, err := open(tt.path, litequeue.Options{})
			if err == nil {
				q.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("open %s (read-only %v): %v, want an error saying %q", tt.path, tt.readOnly, err, tt.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("open %s (read-only %v) still blocks after 10s", tt.path, tt.readOnly)
		}
	}
	noSideFiles(t, lockFIFO, "", "-wal", "-shm")
}

// TestOpenReadOnly_UnreadableFile: OpenReadOnly says a file it may not
// read is not readable. Root reads every file: the test runs only as
// another user.
func TestOpenReadOnly_UnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may read any file")
	}
	t.Parallel()
	path, _ := queueFile(t, t.TempDir())
	if err := os.Chmod(path, 0o200); err != nil {
		t.Fatal(err)
	}
	_, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err == nil || !strings.Contains(err.Error(), "the file is not readable: permission denied") {
		t.Fatalf("OpenReadOnly of a file it may not read: %v", err)
	}
}
