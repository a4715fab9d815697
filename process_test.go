//go:build unix

package litequeue_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/litequeue/litequeue"
)

// These tests run testdata/proc as separate processes on one file and kill,
// stop and race them. Set LITEQUEUE_SOAK=1 for longer runs.

// TestProcess_KillEnqueuer SIGKILLs a process that enqueues: every job whose
// Enqueue had returned before the kill is in the file afterwards.
func TestProcess_KillEnqueuer(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	for round := range soak(3, 20) {
		cmd, out, _ := startProc(t, "enqueue", path, "100000")
		n := 10 + rand.IntN(300)
		waitFor(t, "enqueues to be acknowledged", func() bool { return strings.Count(out.String(), "\n") >= n })
		cmd.Process.Kill()
		cmd.Wait()
		acked := strings.Fields(out.String())
		if len(acked) == 0 {
			t.Fatalf("round %d: no enqueue was acknowledged before the kill", round)
		}
		q := openAt(t, path, litequeue.Options{})
		for _, s := range acked {
			id, _ := strconv.ParseInt(s, 10, 64)
			if _, err := q.Get(t.Context(), id); err != nil {
				t.Fatalf("round %d: acknowledged job %d is gone after the kill: %v", round, id, err)
			}
		}
		q.Close()
		t.Logf("round %d: %d acknowledged enqueues, all present", round, len(acked))
	}
}

// TestProcess_KillWorkers runs two worker processes with slow handlers,
// SIGKILLs one of them at random moments and starts it again, then lets a
// last worker finish. Every job completes, each side effect written with
// CompleteTx exists exactly once, the killed runs are recorded as
// lease_expired, and no handler started more often than the kills explain.
func TestProcess_KillWorkers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, startsLog := filepath.Join(dir, "q.db"), filepath.Join(dir, "starts")
	jobs := soak(150, 1000)
	q := openAt(t, path, litequeue.Options{})
	payloads := make([]any, jobs)
	for i := range payloads {
		payloads[i] = 50 + rand.IntN(150) // ms of work
	}
	if _, err := q.EnqueueMany(t.Context(), "slow", payloads); err != nil {
		t.Fatal(err)
	}
	const concurrency = 4
	workers := make([]*exec.Cmd, 2)
	for i := range workers {
		workers[i], _, _ = startProc(t, "work", path, "w"+strconv.Itoa(i), startsLog)
	}
	kills := 0
	for kills < soak(20, 100) {
		// Kill at a random moment: after a random number of handler starts.
		_, before := readStarts(t, startsLog)
		n := before + 1 + rand.IntN(6)
		waitFor(t, "handlers to start", func() bool { _, total := readStarts(t, startsLog); return total >= n })
		i := rand.IntN(len(workers))
		workers[i].Process.Kill()
		workers[i].Wait()
		kills++
		workers[i], _, _ = startProc(t, "work", path, "w"+strconv.Itoa(i), startsLog)
	}
	for _, w := range workers {
		w.Process.Signal(syscall.SIGTERM)
	}
	for _, w := range workers {
		w.Wait()
	}
	last, _, _ := startProc(t, "work", path, "last", startsLog)
	waitFor(t, "every job to complete", func() bool {
		done, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Completed})
		return err == nil && len(done) == jobs
	})
	last.Process.Signal(syscall.SIGTERM)
	last.Wait()

	fx := effects(t, q)
	starts, totalStarts := readStarts(t, startsLog)
	expired := 0
	for id := int64(1); id <= int64(jobs); id++ {
		if fx[id] != 1 {
			t.Errorf("job %d: %d side effects, want exactly 1", id, fx[id])
		}
		for _, a := range history(t, q, id) {
			if a.Outcome == litequeue.OutcomeLeaseExpired {
				expired++
			}
		}
	}
	if expired == 0 {
		t.Error("no lease_expired attempt recorded despite the kills")
	}
	checkCountsMatchHistory(t, q)
	if extra := totalStarts - len(starts); extra > kills*concurrency {
		t.Errorf("%d extra handler starts for %d kills × %d concurrency", extra, kills, concurrency)
	}
	if !onPostgres { // the server checks its own pages
		var check string
		if err := q.DB().Get(&check, `PRAGMA integrity_check`); err != nil || check != "ok" {
			t.Fatalf("integrity_check = %q, %v", check, err)
		}
	}
	t.Logf("%d jobs, %d kills, %d handler starts (%d extra), %d lease_expired attempts", jobs, kills, totalStarts, totalStarts-len(starts), expired)
}

// startMixed creates the database at path and starts procs processes
// that each enqueue perProc jobs while they work (proc mixed).
func startMixed(t *testing.T, path, startsLog string, procs, perProc int) ([]*exec.Cmd, []*output) {
	t.Helper()
	openAt(t, path, litequeue.Options{}).Close() // create the database once
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*output, procs)
	for i := range cmds {
		cmds[i], outs[i], _ = startProc(t, "mixed", path, "p"+strconv.Itoa(i), startsLog, strconv.Itoa(perProc))
	}
	return cmds, outs
}

// TestProcess_SeveralProcesses runs 4 processes of 8 workers that each
// enqueue while they work: no error reaches any of them (no SQLITE_BUSY),
// every job runs its side effect once, and every process gets work.
func TestProcess_SeveralProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, startsLog := filepath.Join(dir, "q.db"), filepath.Join(dir, "starts")
	const procs = 4
	perProc := soak(250, 2500)
	cmds, outs := startMixed(t, path, startsLog, procs, perProc)
	var slowest int64
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		var report struct {
			SlowestEnqueueMS int64 `json:"slowest_enqueue_ms"`
			ErrorsLogged     int   `json:"errors_logged"`
		}
		if err := json.Unmarshal([]byte(outs[i].String()), &report); err != nil {
			t.Fatalf("process %d report %q: %v", i, outs[i], err)
		}
		if report.ErrorsLogged != 0 {
			t.Errorf("process %d logged %d errors", i, report.ErrorsLogged)
		}
		slowest = max(slowest, report.SlowestEnqueueMS)
	}
	q := openAt(t, path, litequeue.Options{})
	fx := effects(t, q)
	if len(fx) != procs*perProc {
		t.Fatalf("%d jobs had their side effect, want %d", len(fx), procs*perProc)
	}
	for id, n := range fx {
		if n != 1 {
			t.Errorf("job %d: %d side effects", id, n)
		}
	}
	_, total := readStarts(t, startsLog)
	perWorker := map[string]int{}
	f, _ := os.ReadFile(startsLog)
	for _, line := range strings.Split(string(f), "\n") {
		if fields := strings.Fields(line); len(fields) == 3 {
			perWorker[fields[2]]++
		}
	}
	for i := range procs {
		if perWorker["p"+strconv.Itoa(i)] == 0 {
			t.Errorf("process p%d ran no job: it starved", i)
		}
	}
	t.Logf("%d processes × 8 workers, %d jobs, %d handler starts, per process %v, slowest enqueue %d ms", procs, procs*perProc, total, perWorker, slowest)
}

// TestProcess_KillMixed runs 4 processes × 8 workers that each enqueue
// and work, as machines sharing one database would, and SIGKILLs one at a
// random moment 10 times, starting it again. Every job that
// was enqueued completes, each side effect written with CompleteTx exists
// exactly once, and no process that ran to its end logged an error.
func TestProcess_KillMixed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, startsLog := filepath.Join(dir, "q.db"), filepath.Join(dir, "starts")
	const procs = 4
	perProc := soak(500, 2500)
	cmds, outs := startMixed(t, path, startsLog, procs, perProc)
	// The kills come after random numbers of handler starts, all before
	// the half of the jobs has started: every process is still at work.
	at := make([]int, 10)
	for i := range at {
		at[i] = 1 + rand.IntN(procs*perProc/2)
	}
	slices.Sort(at)
	for kill, n := range at {
		waitFor(t, "handlers to start", func() bool { _, total := readStarts(t, startsLog); return total >= n })
		i := rand.IntN(procs)
		cmds[i].Process.Kill()
		cmds[i].Wait()
		// Again, with jobs of its own to enqueue: what the killed one had
		// not enqueued is never enqueued.
		name := "p" + strconv.Itoa(i) + "-" + strconv.Itoa(kill)
		cmds[i], outs[i], _ = startProc(t, "mixed", path, name, startsLog, strconv.Itoa(perProc))
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		var report struct {
			ErrorsLogged int `json:"errors_logged"`
		}
		if err := json.Unmarshal([]byte(outs[i].String()), &report); err != nil {
			t.Fatalf("process %d report %q: %v", i, outs[i], err)
		}
		if report.ErrorsLogged != 0 {
			t.Errorf("process %d logged %d errors", i, report.ErrorsLogged)
		}
	}
	q := openAt(t, path, litequeue.Options{})
	jobs, err := q.List(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	fx := effects(t, q)
	for _, j := range jobs {
		if j.State != litequeue.Completed {
			t.Errorf("job %d is %s, want completed", j.ID, j.State)
		}
		if fx[j.ID] != 1 {
			t.Errorf("job %d: %d side effects, want exactly 1", j.ID, fx[j.ID])
		}
	}
	if len(fx) != len(jobs) {
		t.Errorf("%d side effects for %d jobs", len(fx), len(jobs))
	}
	_, total := readStarts(t, startsLog)
	t.Logf("%d processes × 8 workers, 10 kills: %d jobs enqueued, all completed once, %d handler starts", procs, len(jobs), total)
}

// TestProcess_PausedWorker SIGSTOPs a worker while it runs a job, past its
// lease; another worker rescues the job and completes it; after SIGCONT the
// stopped worker's completion is refused, and the job's side effect exists
// once.
func TestProcess_PausedWorker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, startsLog := filepath.Join(dir, "q.db"), filepath.Join(dir, "starts")
	q := openAt(t, path, litequeue.Options{})
	j := enqueue(t, q, "slow", 150) // 150ms of work
	paused, _, pausedLog := startProc(t, "work", path, "paused", startsLog)
	waitFor(t, "the worker to start the job", func() bool {
		starts, _ := readStarts(t, startsLog)
		return starts[j.ID] == 1
	})
	paused.Process.Signal(syscall.SIGSTOP)
	other, _, _ := startProc(t, "work", path, "other", startsLog)
	waitFor(t, "the other worker to complete the job", func() bool {
		return get(t, q, j.ID).State == litequeue.Completed
	})
	paused.Process.Signal(syscall.SIGCONT)
	waitFor(t, "the paused worker's stale completion to be refused", func() bool {
		return strings.Contains(pausedLog.String(), "its lease was lost")
	})
	for _, w := range []*exec.Cmd{paused, other} {
		w.Process.Signal(syscall.SIGTERM)
		w.Wait()
	}
	if fx := effects(t, q); fx[j.ID] != 1 {
		t.Fatalf("%d side effects, want 1", fx[j.ID])
	}
	h := history(t, q, j.ID)
	if len(h) != 2 || h[0].Outcome != litequeue.OutcomeLeaseExpired || h[0].Worker != "paused" ||
		h[1].Outcome != litequeue.OutcomeCompleted || h[1].Worker != "other" {
		t.Fatalf("history outcomes %v, want lease_expired by paused, completed by other: %+v", outcomes(h), h)
	}
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
