//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestOpen_FIFO runs commands on a --db that names a FIFO: each fails at
// once, saying what the path is, instead of blocking on it forever.
func TestOpen_FIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "jobs.db")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"stats"}, {"check"}, {"cancel", "5"}, {"enqueue", "ping"}} {
		done := make(chan result, 1)
		go func() {
			c := testCLI("")
			c.db = fifo
			done <- runCLI(t, c, args...)
		}()
		select {
		case r := <-done:
			if r.code != exitFailure || !strings.Contains(r.stderr, "it is a named pipe (FIFO), not a database file") {
				t.Errorf("litequeue %s: exit %d, stderr %q; want exit 1 saying it is a FIFO", strings.Join(args, " "), r.code, r.stderr)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("litequeue %s on a FIFO still blocks after 10s", strings.Join(args, " "))
		}
	}
}

// TestConfig_FIFO runs a command with a --config that names a FIFO: it
// fails at once as a usage error, saying what the path is, instead of
// blocking on it forever.
func TestConfig_FIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "litequeue.toml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // a reader still blocked opening it goes
		if fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			unix.Close(fd)
		}
	})
	done := make(chan result, 1)
	go func() {
		c := testCLI("")
		c.db, c.config = filepath.Join(t.TempDir(), "jobs.db"), fifo
		done <- runCLI(t, c, "stats")
	}()
	select {
	case r := <-done:
		if r.code != exitUsage || !strings.Contains(r.stderr, fifo+": it is a named pipe (FIFO), not a regular file") {
			t.Errorf("litequeue --config FIFO stats: exit %d, stderr %q; want exit 2 saying it is a FIFO", r.code, r.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("litequeue --config FIFO stats still blocks after 10s")
	}
}
