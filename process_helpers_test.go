//go:build unix

package litequeue_test

import (
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

// A binary is a program of the module that the process tests build once
// per test binary, into a temp dir of its own.
type binary struct {
	pkg, name string // the package's path, and the file's name
	once      sync.Once
	path      string
	err       error
}

// build builds b once, and returns the path of the program, failing the
// test if the build failed.
func (b *binary) build(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "litequeue-"+b.name)
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, b.name)
		if out, err := exec.Command("go", "build", "-o", b.path, b.pkg).CombinedOutput(); err != nil {
			b.err, b.path = err, string(out)
		}
	})
	if b.err != nil {
		t.Fatalf("build %s: %v\n%s", strings.TrimPrefix(b.pkg, "./"), b.err, b.path)
	}
	return b.path
}

var (
	proc    = &binary{pkg: "./testdata/proc", name: "proc"}
	command = &binary{pkg: "./cmd/litequeue", name: "litequeue"}
)

// buildProc builds testdata/proc once per test binary.
func buildProc(t *testing.T) string { return proc.build(t) }

// soak scales a test's size up when LITEQUEUE_SOAK is set.
func soak(short, long int) int {
	if os.Getenv("LITEQUEUE_SOAK") != "" {
		return long
	}
	return short
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

// buildCommand builds cmd/litequeue once per test binary.
func buildCommand(t *testing.T) string { return command.build(t) }

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
