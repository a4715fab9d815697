//go:build unix

package litequeue_test

import (
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/litequeue/litequeue"
)

// TestQueue_BackupSpecialFiles: Backup, with Overwrite or without,
// replaces nothing but a regular file or a symbolic link: a FIFO, a socket
// or a device node at the path is refused, with an error naming the path
// and what is there, and stays what it was. A symbolic link to a device is
// replaced by the copy, and the device stays a device.
func TestQueue_BackupSpecialFiles(t *testing.T) {
	fileOnly(t, "a backup copies the file")
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	enqueue(t, q, "send", nil)
	dir := t.TempDir()

	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// As root, a device node of our own, so that a Backup that replaced it
	// would not replace the machine's /dev/null; as another user,
	// /dev/null itself, which the test cannot replace but Backup must not
	// try to.
	device := "/dev/null"
	if os.Geteuid() == 0 {
		device = filepath.Join(dir, "null")
		if err := unix.Mknod(device, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod %s: %v", device, err)
		}
	}
	for _, tt := range []struct {
		path string
		is   string
		mode fs.FileMode
	}{
		{fifo, "a named pipe (FIFO)", fs.ModeNamedPipe},
		{sock, "a socket", fs.ModeSocket},
		{device, "a device", fs.ModeDevice | fs.ModeCharDevice},
	} {
		for _, overwrite := range []bool{false, true} {
			err := q.Backup(t.Context(), tt.path, litequeue.BackupOptions{Overwrite: overwrite})
			if want := "backup to " + tt.path + ": it is " + tt.is; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Backup to %s, overwrite %v: %v; want an error saying %q", tt.path, overwrite, err, want)
			}
			fi, err := os.Lstat(tt.path)
			if err != nil || fi.Mode().Type() != tt.mode {
				t.Fatalf("after Backup, overwrite %v: %s is %v (%v), want %v", overwrite, tt.path, fi.Mode().Type(), err, tt.mode)
			}
		}
	}

	link := filepath.Join(dir, "link.db")
	if err := os.Symlink(device, link); err != nil {
		t.Fatal(err)
	}
	if err := q.Backup(t.Context(), link, litequeue.BackupOptions{Overwrite: true}); err != nil {
		t.Fatalf("Backup over a symbolic link to %s: %v", device, err)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("after Backup, the link is %v (%v), want the copy, a regular file", fi.Mode(), err)
	}
	if fi, err := os.Lstat(device); err != nil || fi.Mode().Type() != fs.ModeDevice|fs.ModeCharDevice {
		t.Errorf("after Backup over a link to it, %s is %v (%v), want a character device", device, fi.Mode(), err)
	}
	if h := health(t, openReadOnly(t, link)); !h.OK() || !h.Backup || h.Jobs[litequeue.Pending] != 1 {
		t.Errorf("the copy that replaced the link: ok %v, backup %v, jobs %v", h.OK(), h.Backup, h.Jobs)
	}

	want := "fifo link.db sock"
	if device != "/dev/null" {
		want = "fifo link.db null sock"
	}
	if got := strings.Join(dirNames(t, dir), " "); got != want {
		t.Errorf("after the backups the directory holds %q, want %q", got, want)
	}
}
