//go:build linux

package litequeue_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/litequeue/litequeue"
)

// These tests give Open files and places it cannot use — a read-only file,
// a read-only directory — and check for a clear error, never a panic.
// open_test.go has the files Open refuses by content. As root, permission
// bits do not stop a write, so the tests use what does: the immutable
// attribute and a read-only bind mount.

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

// TestOpen_ReadOnlyFile: Open refuses a file it may not write, saying so,
// and leaves it as it was; OpenReadOnly still inspects it.
func TestOpen_ReadOnlyFile(t *testing.T) {
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
