package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inotifyFD returns the descriptor of w's inotify instance, which stays
// open until w is closed.
func inotifyFD(t *testing.T, w *dirWatch) int {
	t.Helper()
	rc, err := w.f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd uintptr
	if err := rc.Control(func(f uintptr) { fd = f }); err != nil {
		t.Fatal(err)
	}
	return int(fd)
}

// watches reports how many directories the kernel watches for n's changes
// of files: 1 while its watch is on, 0 while it is off, as the inotify
// instance's entry in /proc/self/fdinfo gives its mask.
func watches(t *testing.T, n *notifier) int {
	t.Helper()
	info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", inotifyFD(t, n.w)))
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for line := range strings.Lines(string(info)) {
		for _, field := range strings.Fields(line) {
			hex, ok := strings.CutPrefix(field, "mask:")
			if !ok || !strings.HasPrefix(line, "inotify ") {
				continue
			}
			mask, err := strconv.ParseUint(hex, 16, 32)
			if err != nil {
				t.Fatalf("fdinfo %q: %v", line, err)
			}
			if mask&dirChanges != 0 {
				count++
			}
		}
	}
	return count
}

// eventsUpTo reads w's events up to the first of the file last, and
// returns the names that came before it, each once.
func eventsUpTo(t *testing.T, w *dirWatch, last string) []string {
	t.Helper()
	var before []string
	for deadline := time.After(10 * time.Second); ; {
		select {
		case name, ok := <-w.events:
			if !ok {
				t.Fatalf("the watch ended before %q", last)
			}
			if name == last {
				return before
			}
			if len(before) == 0 || before[len(before)-1] != name {
				before = append(before, name)
			}
		case err := <-w.errors:
			t.Fatalf("waiting for %q: %v", last, err)
		case <-deadline:
			t.Fatalf("no event for %q after 10s", last)
		}
	}
}

// TestDirWatch_Off checks that a watch turned off tells of no change, that
// it keeps what it queued before, that it refuses to turn on when its path
// names another directory, and that the directory's removal ends it. Each
// check creates a last, empty file and reads up to its event: the kernel's
// queue is in order, so an event that should not have come would come
// before it.
func TestDirWatch_Off(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := watchDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	touch := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// mark creates an empty file: one event, IN_CREATE.
	mark := func(name string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	turn := func(on bool) {
		t.Helper()
		if err := w.watch(on); err != nil {
			t.Fatal(err)
		}
	}

	turn(false)
	touch("unseen")
	turn(true)
	mark("first")
	if got := eventsUpTo(t, w, "first"); len(got) != 0 {
		t.Errorf("events while off: %q, want none", got)
	}

	// The reader takes blocker and waits to pass it on, so that queued
	// stays in the kernel's queue, whose length FIONREAD (TIOCINQ) tells.
	queuedBytes := func() int {
		t.Helper()
		n, err := unix.IoctlGetInt(inotifyFD(t, w), unix.TIOCINQ)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	mark("blocker")
	waitFor(t, "the reader to take blocker's event", func() bool { return queuedBytes() == 0 })
	touch("queued")
	if queuedBytes() == 0 {
		t.Fatal("no event queued in the kernel for a write")
	}
	for range 100 {
		turn(false)
		turn(true)
	}
	if queuedBytes() == 0 {
		t.Error("the kernel's queue is empty after the watch was turned off and on 100 times")
	}
	mark("second")
	if got := eventsUpTo(t, w, "second"); len(got) != 2 || got[0] != "blocker" || got[1] != "queued" {
		t.Errorf("events queued before the watch was turned off and on 100 times: %q, want [blocker queued]", got)
	}

	// watchNew watches a new directory in dir, until the test ends.
	watchNew := func(name string) (string, *dirWatch) {
		t.Helper()
		sub := filepath.Join(dir, name)
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		w, err := watchDir(sub)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.close() })
		return sub, w
	}
	moved, mw := watchNew("moved")
	if err := os.Rename(moved, moved+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(moved, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := mw.watch(true); !errors.Is(err, errMoved) {
		t.Errorf("turning on the watch of a directory moved away and made again: %v, want errMoved", err)
	}

	sub, gone := watchNew("sub")
	if err := gone.watch(false); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	select {
	case name, ok := <-gone.events:
		if ok {
			t.Fatalf("an event for %q from a watch turned off, want none", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch of a removed directory still runs after 10s")
	}
	if err := gone.watch(true); err == nil {
		t.Error("turning on the watch of a removed directory succeeded, want an error")
	}
}

// TestDirWatch_Overflow fills the kernel's queue of events while no one
// reads them: the watch passes the overflow on as errOverflow, after the
// events that fit, and goes on telling of changes after it.
func TestDirWatch_Overflow(t *testing.T) {
	t.Parallel()
	limit, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("the queue's size is unknown: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(limit)))
	if err != nil || n > 1<<17 {
		t.Skipf("max_queued_events %q: too many events to queue in a test", limit)
	}
	dir := t.TempDir()
	w, err := watchDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	var files [2]*os.File
	for i, name := range []string{"a", "b"} {
		if files[i], err = os.Create(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		defer files[i].Close()
	}
	// The kernel merges an event into the one queued last if they are
	// alike: writes to two files in turn are not.
	for i := range n + 1000 {
		if _, err := files[i%2].WriteAt([]byte{1}, 0); err != nil {
			t.Fatal(err)
		}
	}
	events := 0
	for deadline := time.After(10 * time.Second); ; {
		select {
		case _, ok := <-w.events:
			if !ok {
				t.Fatal("the watch ended before the overflow")
			}
			events++
			continue
		case err := <-w.errors:
			if err != errOverflow {
				t.Fatalf("error %v after %d events, want errOverflow", err, events)
			}
		case <-deadline:
			t.Fatalf("no overflow after %d events and 10s", events)
		}
		break
	}
	// Those the kernel queued, and up to a read's worth the reader took
	// from the queue before it filled.
	if most := n + readSize/unix.SizeofInotifyEvent; events < n || events > most {
		t.Errorf("%d events came before the overflow, want from the queue's %d to %d", events, n, most)
	}
	if err := os.WriteFile(filepath.Join(dir, "after"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventsUpTo(t, w, "after")
}
