//go:build unix

package litequeue_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestProcess_DiamondThroughKill: diamonds (A → B, C → D) run by three
// worker processes, one of which is killed with SIGKILL while it runs a
// B: every D starts exactly once, after its B and C completed, although
// its B ran twice (the killed run, and the run after its lease expired).
func TestProcess_DiamondThroughKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, starts := filepath.Join(dir, "q.db"), filepath.Join(dir, "starts")
	q := openAt(t, path, litequeue.Options{})
	const diamonds = 6
	type diamond struct{ a, b, c, d *litequeue.Job }
	var graphs []diamond
	for range diamonds {
		a := enqueue(t, q, "node", 20)
		b := enqueue(t, q, "node", 800, litequeue.DependsOn(a.ID))
		c := enqueue(t, q, "node", 100, litequeue.DependsOn(a.ID))
		d := enqueue(t, q, "node", 20, litequeue.DependsOn(b.ID, c.ID))
		graphs = append(graphs, diamond{a, b, c, d})
	}
	procs := map[string]*exec.Cmd{}
	for _, name := range []string{"p1", "p2", "p3"} {
		procs[name], _, _ = startProc(t, "diamond", path, name, starts)
	}
	// Kill the process that starts the first B, while it runs it.
	var killed string
	waitFor(t, "a B to start", func() bool {
		for _, line := range startLines(t, starts) {
			if f := strings.Fields(line); len(f) == 4 && f[0] == itoa(graphs[0].b.ID) {
				killed = f[2]
				return true
			}
		}
		return false
	})
	if err := procs[killed].Process.Kill(); err != nil {
		t.Fatal(err)
	}
	procs[killed].Wait()
	delete(procs, killed)
	waitWithin(t, time.Minute, "every D to complete", func() bool {
		for _, g := range graphs {
			if get(t, q, g.d.ID).State != litequeue.Completed {
				return false
			}
		}
		return true
	})
	for _, cmd := range procs {
		cmd.Process.Signal(syscall.SIGTERM)
		waitProc(t, cmd, 30*time.Second)
	}
	runs := map[string][]string{} // by job ID: "attempt name ready" of each start
	for _, line := range startLines(t, starts) {
		f := strings.Fields(line)
		runs[f[0]] = append(runs[f[0]], strings.Join(f[1:], " "))
	}
	for i, g := range graphs {
		d := runs[itoa(g.d.ID)]
		if len(d) != 1 || !strings.HasSuffix(d[0], " true") {
			t.Errorf("diamond %d: D started %d times (%q), want once, after B and C completed", i, len(d), d)
		}
		for _, j := range []*litequeue.Job{g.a, g.b, g.c} {
			if got := get(t, q, j.ID).State; got != litequeue.Completed {
				t.Errorf("diamond %d: job %d %s, want completed", i, j.ID, got)
			}
		}
	}
	if b := runs[itoa(graphs[0].b.ID)]; len(b) != 2 || !strings.Contains(b[0], killed) {
		t.Errorf("the B whose process was killed started %q, want twice, first in %s", b, killed)
	}
}

// startLines reads the lines the processes appended to the file starts.
func startLines(t *testing.T, starts string) []string {
	t.Helper()
	data, err := os.ReadFile(starts)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}
