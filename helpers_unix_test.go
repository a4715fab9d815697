//go:build unix

package litequeue_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

var (
	procOnce sync.Once
	procPath string
	procErr  error
)

// buildProc builds testdata/proc once per test binary.
func buildProc(t *testing.T) string {
	t.Helper()
	procOnce.Do(func() {
		dir, err := os.MkdirTemp("", "litequeue-proc")
		if err != nil {
			procErr = err
			return
		}
		procPath = filepath.Join(dir, "proc")
		out, err := exec.Command("go", "build", "-o", procPath, "./testdata/proc").CombinedOutput()
		if err != nil {
			procErr = err
			procPath = string(out)
		}
	})
	if procErr != nil {
		t.Fatalf("build testdata/proc: %v\n%s", procErr, procPath)
	}
	return procPath
}

// soak scales a test's size up when LITEQUEUE_SOAK is set.
func soak(short, long int) int {
	if os.Getenv("LITEQUEUE_SOAK") != "" {
		return long
	}
	return short
}

// output is a process's output, safe to read while the process writes it.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// startProc starts proc with the arguments, its stdout and stderr captured
// (stderr is copied to the test's too).
func startProc(t *testing.T, args ...string) (cmd *exec.Cmd, stdout, stderr *output) {
	t.Helper()
	if onPostgres { // each file the test names is a schema of the server
		for i, a := range args {
			if strings.HasSuffix(a, ".db") {
				args[i] = schemaFor(t, a)
			}
		}
	}
	cmd = exec.Command(buildProc(t), args...)
	stdout, stderr = new(output), new(output)
	cmd.Stdout = stdout
	cmd.Stderr = io.MultiWriter(stderr, os.Stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, stderr
}

// starts reads the start log: how often each job started.
func readStarts(t *testing.T, path string) (map[int64]int, int) {
	t.Helper()
	starts, total := map[int64]int{}, 0
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return starts, 0 // no handler has started yet
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue // a line cut by a kill
		}
		id, _ := strconv.ParseInt(fields[0], 10, 64)
		starts[id]++
		total++
	}
	return starts, total
}

// effects reads the side effects the handlers committed with CompleteTx.
func effects(t *testing.T, q *litequeue.Queue) map[int64]int {
	t.Helper()
	var ids []int64
	if err := q.DB().Select(&ids, `SELECT job_id FROM effects`); err != nil {
		t.Fatal(err)
	}
	m := map[int64]int{}
	for _, id := range ids {
		m[id]++
	}
	return m
}

var (
	commandOnce sync.Once
	commandPath string
	commandErr  error
)

// buildCommand builds cmd/litequeue once per test binary.
func buildCommand(t *testing.T) string {
	t.Helper()
	commandOnce.Do(func() {
		dir, err := os.MkdirTemp("", "litequeue-command")
		if err != nil {
			commandErr = err
			return
		}
		commandPath = filepath.Join(dir, "litequeue")
		out, err := exec.Command("go", "build", "-o", commandPath, "./cmd/litequeue").CombinedOutput()
		if err != nil {
			commandErr = err
			commandPath = string(out)
		}
	})
	if commandErr != nil {
		t.Fatalf("build cmd/litequeue: %v\n%s", commandErr, commandPath)
	}
	return commandPath
}

// waitProc waits for the process to exit successfully, killing it and
// failing the test after d of real time.
func waitProc(t *testing.T, cmd *exec.Cmd, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v: %v", cmd.Args, err)
		}
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v still running after %v: killed", cmd.Args, d)
	}
}

// fileSizes is what the file takes on disk and in pages.
type fileSizes struct {
	DB, WAL     int64 // bytes
	Pages, Free int   // page_count, freelist_count
}

func (s fileSizes) String() string {
	return fmt.Sprintf("file %s (%d pages, %d free), WAL %s", mib(s.DB), s.Pages, s.Free, mib(s.WAL))
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

func sizesOf(t *testing.T, q *litequeue.Queue, path string) fileSizes {
	t.Helper()
	var s fileSizes
	if fi, err := os.Stat(path); err == nil {
		s.DB = fi.Size()
	}
	if fi, err := os.Stat(path + "-wal"); err == nil {
		s.WAL = fi.Size()
	}
	if err := q.DB().Get(&s.Pages, `PRAGMA page_count`); err != nil {
		t.Fatal(err)
	}
	if err := q.DB().Get(&s.Free, `PRAGMA freelist_count`); err != nil {
		t.Fatal(err)
	}
	return s
}

// completeJobs enqueues n jobs with 200-byte payloads, in batches, and
// runs them all.
func completeJobs(t *testing.T, q *litequeue.Queue, n int) {
	t.Helper()
	pad := strings.Repeat("x", 200)
	for i := 0; i < n; i += 1000 {
		batch := make([]any, min(1000, n-i))
		for j := range batch {
			batch[j] = map[string]any{"n": i + j, "pad": pad}
		}
		if _, err := q.EnqueueMany(t.Context(), "k", batch); err != nil {
			t.Fatal(err)
		}
	}
	if got := runDue(t, q); got != n {
		t.Fatalf("RunDue ran %d jobs, want %d", got, n)
	}
}

// openGrowth opens a queue on a new file whose kind "k" succeeds.
func openGrowth(t *testing.T, opts litequeue.Options) (*litequeue.Queue, string) {
	t.Helper()
	opts.Synchronous = "normal"
	q, path := openQueue(t, opts)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	return q, path
}
