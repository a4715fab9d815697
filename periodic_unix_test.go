//go:build unix

package litequeue_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// periodicProc is a child "proc periodic": a Queue on a mock clock that
// the test steps, one "at" command at a time.
type periodicProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// line returns the child's next line of output.
func (p *periodicProc) line() string {
	if !p.out.Scan() {
		return fmt.Sprintf("(no output: %v)", p.out.Err())
	}
	return p.out.Text()
}

// at has the child set its clock to t and call RunDue; it returns the
// runs, or -1 with what the child said instead.
func (p *periodicProc) at(t time.Time) (int, string) {
	fmt.Fprintf(p.in, "at %d\n", t.UnixMilli())
	reply := p.line()
	n, err := strconv.Atoi(strings.TrimPrefix(reply, "ran "))
	if err != nil {
		return -1, reply
	}
	return n, ""
}

func startPeriodicProc(t *testing.T, db string, start time.Time) *periodicProc {
	t.Helper()
	if onPostgres {
		db = schemaFor(t, db)
	}
	cmd := exec.Command(buildProc(t), "periodic", db, strconv.FormatInt(start.UnixMilli(), 10))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &periodicProc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	if got := p.line(); got != "ready" {
		t.Fatalf("child said %q, want ready", got)
	}
	return p
}

// TestProcess_PeriodicDay runs a day of "*/15 * * * *" in two processes
// on one file, both stepped to every slot at once so that they race for
// it: 96 jobs, one per slot, each run once.
func TestProcess_PeriodicDay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	procs := []*periodicProc{
		startPeriodicProc(t, path, day.Add(-30*time.Second)),
		startPeriodicProc(t, path, day.Add(-30*time.Second)),
	}
	runs := make([]int, len(procs))
	for _, slot := range slots(day, 15*time.Minute, 96) {
		type reply struct {
			child, runs int
			bad         string
		}
		replies := make(chan reply, len(procs))
		for i, p := range procs {
			go func() {
				n, bad := p.at(slot)
				replies <- reply{i, n, bad}
			}()
		}
		for range procs {
			r := <-replies
			if r.runs < 0 {
				t.Fatalf("child %d at %v said %q", r.child, slot, r.bad)
			}
			runs[r.child] += r.runs
		}
	}
	q := openAt(t, path, litequeue.Options{})
	jobs := periodicJobs(t, q, "tick")
	if diff := cmp.Diff(slots(day, 15*time.Minute, 96), slotsOf(jobs)); diff != "" {
		t.Errorf("slots fired (-want +got):\n%s", diff)
	}
	for _, j := range jobs {
		if j.State != litequeue.Completed || j.Attempt != 1 {
			t.Errorf("job %d: %s after %d attempts, want completed after 1", j.ID, j.State, j.Attempt)
		}
	}
	if runs[0]+runs[1] != 96 {
		t.Errorf("runs %v, want 96 in all", runs)
	}
	t.Logf("96 slots, 96 jobs; runs per process %v", runs)
}
