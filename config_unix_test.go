//go:build unix

package litequeue_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/litequeue/litequeue"
)

// TestLoadConfig_SpecialFiles loads a config from a FIFO, which blocked
// for good, from devices that read forever (/dev/zero, /dev/urandom) or
// read as an empty file (/dev/null): each is refused at once, with what
// it is.
func TestLoadConfig_SpecialFiles(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "litequeue.toml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unblockFIFO(fifo) })
	for _, tt := range []struct{ path, want string }{
		{fifo, fifo + ": it is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "/dev/zero: it is a device, not a regular file"},
		{"/dev/urandom", "/dev/urandom: it is a device, not a regular file"},
		{"/dev/null", "/dev/null: it is a device, not a regular file"},
	} {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			err := loadConfigWithin(t, tt.path, 10*time.Second)
			if err == nil || err.Error() != tt.want {
				t.Errorf("LoadConfig(%s) = %v, want %q", tt.path, err, tt.want)
			}
		})
	}
}

// loadConfigWithin returns the error of LoadConfig(path), or fails the
// test if LoadConfig has not returned within d.
func loadConfigWithin(t *testing.T, path string, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := litequeue.LoadConfig(path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("LoadConfig(%s) still reads after %v", path, d)
		return nil
	}
}

// unblockFIFO lets a reader blocked opening the FIFO at path go: it opens
// the FIFO for writing, without blocking if no one reads, and closes it.
func unblockFIFO(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// TestLoadConfig_SymlinkToFIFO loads a config through a symbolic link to a
// FIFO: the FIFO is refused as if named, and a link to a regular file is
// read.
func TestLoadConfig_SymlinkToFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unblockFIFO(fifo) })
	link := filepath.Join(dir, "litequeue.toml")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	if err := loadConfigWithin(t, link, 10*time.Second); err == nil || err.Error() != link+": it is a named pipe (FIFO), not a regular file" {
		t.Errorf("LoadConfig(link to a FIFO) = %v, want it refused as a FIFO", err)
	}
	file := writeConfig(t, "[retry]\nmax_tries = 3\n")
	good := filepath.Join(dir, "good.toml")
	if err := os.Symlink(file, good); err != nil {
		t.Fatal(err)
	}
	if o, err := litequeue.LoadConfig(good); err != nil || o.Retry.MaxTries != 3 {
		t.Errorf("LoadConfig(link to a file) = max_tries %d, %v; want 3, nil", o.Retry.MaxTries, err)
	}
}
