//go:build unix

package litequeue_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
