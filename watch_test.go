//go:build unix

package litequeue_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/goleak"

	"github.com/litequeue/litequeue"
)

// watchWorker opens a Queue on a new file, with the real clock, whose Work
// is told of other processes' writes by the file system if notify, and
// otherwise looks every poll. Its handler of "slow" jobs sends each job's
// ID on the channel returned. Work runs until the test ends.
func watchWorker(t *testing.T, notify bool, poll time.Duration) (*litequeue.Queue, string, <-chan int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "queue.db")
	q := openAt(t, path, litequeue.Options{Clock: clock.New()})
	litequeue.SetWatch(q, notify, poll)
	started := make(chan int64, 16)
	q.Handle("slow", func(ctx context.Context, job *litequeue.Job) error {
		started <- job.ID
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- q.Work(t.Context(), litequeue.WorkerOptions{Concurrency: 2}) }()
	t.Cleanup(func() {
		q.Close()
		if err := <-done; err != nil {
			t.Errorf("Work: %v", err)
		}
	})
	// One job of this process first: Work has looked, and is idle after it.
	want := enqueue(t, q, "slow", 0).ID
	if got := awaitStart(t, started); got != want {
		t.Fatalf("started job %d, want %d", got, want)
	}
	return q, path, started
}

// awaitStart returns the ID of the next job whose handler starts, failing
// the test after a generous real-time deadline.
func awaitStart(t *testing.T, started <-chan int64) int64 {
	t.Helper()
	select {
	case id := <-started:
		return id
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for a job to start")
		return 0
	}
}

// enqueueElsewhere enqueues one "slow" job from another process and
// returns its ID.
func enqueueElsewhere(t *testing.T, path string) int64 {
	t.Helper()
	cmd, stdout, _ := startProc(t, "enqueue", path, "1")
	waitProc(t, cmd, 20*time.Second)
	id, err := strconv.ParseInt(strings.TrimSpace(stdout.String()), 10, 64)
	if err != nil {
		t.Fatalf("proc enqueue printed %q: %v", stdout.String(), err)
	}
	return id
}

// TestWork_OtherWriters checks that an idle Work starts a job committed
// outside its Queue — by another process, or by the app's EnqueueTx —
// without waiting for its own next look: with that look an hour away, the
// file system's notification wakes it. Without notifications, the look
// it makes on its own finds the job.
func TestWork_OtherWriters(t *testing.T) {
	fileOnly(t, "the file system's notifications of changes to the file")
	t.Parallel()
	t.Run("another process, notified", func(t *testing.T) {
		t.Parallel()
		_, path, started := watchWorker(t, true, time.Hour)
		want := enqueueElsewhere(t, path)
		if got := awaitStart(t, started); got != want {
			t.Fatalf("started job %d, want %d", got, want)
		}
	})
	t.Run("EnqueueTx, notified", func(t *testing.T) {
		t.Parallel()
		q, _, started := watchWorker(t, true, time.Hour)
		tx, err := q.DB().BeginTxx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		job, err := q.EnqueueTx(t.Context(), tx, "slow", 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := awaitStart(t, started); got != job.ID {
			t.Fatalf("started job %d, want %d", got, job.ID)
		}
	})
	t.Run("another process, not notified: the poll", func(t *testing.T) {
		t.Parallel()
		_, path, started := watchWorker(t, false, 50*time.Millisecond)
		want := enqueueElsewhere(t, path)
		if got := awaitStart(t, started); got != want {
			t.Fatalf("started job %d, want %d", got, want)
		}
	})
}

// inotifyFDs counts this process's inotify descriptors.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// TestWork_WatcherClosed checks that a Work on a file watches it with one
// inotify descriptor and one goroutine, which Close ends; a Work on
// PostgreSQL watches no file. It counts the process's descriptors, so it
// does not run in parallel with the tests that work.
func TestWork_WatcherClosed(t *testing.T) {
	// Not parallel: goleak and the inotify count see the whole process.
	if runtime.GOOS != "linux" {
		t.Skip("counts inotify descriptors in /proc/self/fd")
	}
	leaks := []goleak.Option{goleak.IgnoreCurrent()}
	if onPostgres { // the suite's pool for the server's schemas, opened on first use, stays
		leaks = append(leaks, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
	}
	defer goleak.VerifyNone(t, leaks...)
	before := inotifyFDs(t)
	q, _ := openQueue(t, litequeue.Options{Clock: clock.New()})
	started := make(chan int64, 1)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		started <- job.ID
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- q.Work(t.Context(), litequeue.WorkerOptions{}) }()
	enqueue(t, q, "k", nil)
	awaitStart(t, started) // Work has begun: its watch too
	want := 1
	if onPostgres {
		want = 0
	}
	if got := inotifyFDs(t) - before; got != want {
		t.Errorf("inotify descriptors while Work runs: %d more than before, want %d", got, want)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Work: %v", err)
	}
	if got := inotifyFDs(t) - before; got != 0 {
		t.Errorf("inotify descriptors after Close: %d more than before, want 0", got)
	}
}
