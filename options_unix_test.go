//go:build unix

package litequeue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// The Litestream test replicates a file to a file:// replica with the real
// litestream, while testdata/proc's "replicate" app enqueues and works on
// it, and restores the replica, mid-run and after the app stopped.
// .ci/run installs the pinned version:
//
//	go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18

// litestreamBinary returns the path of litestream, found on PATH or in
// Go's bin directory. Without it the test skips, except under CI
// (CI=true), where .ci/run installs it: there a missing binary fails it.
func litestreamBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("litestream"); err == nil {
		return p
	}
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		dirs := []string{lines[0]}
		if len(lines) > 1 {
			for _, gopath := range filepath.SplitList(lines[1]) {
				dirs = append(dirs, filepath.Join(gopath, "bin"))
			}
		}
		for _, dir := range dirs {
			p := filepath.Join(dir, "litestream")
			if fi, err := os.Stat(p); dir != "" && err == nil && fi.Mode().IsRegular() {
				return p
			}
		}
	}
	const install = "go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18"
	if os.Getenv("CI") == "true" {
		t.Fatalf("litestream is missing under CI (.ci/run installs it with %s)", install)
	}
	t.Skipf("litestream is not installed, on PATH or in Go's bin directory (%s)", install)
	return ""
}

// TestOptions_CheckpointLitestream replicates, with checkpoint "auto" and
// "off", a file that an app enqueues into and works on for 20 s
// (LITEQUEUE_SOAK: 60 s): a restore taken mid-run opens, and its running
// jobs are rescued after their lease on the mock clock, counting a try; the
// restore taken after the app stopped holds every acknowledged enqueue, and
// every job and history row, idempotency key included, as the file does.
func TestOptions_CheckpointLitestream(t *testing.T) {
	fileOnly(t, "Litestream replicates a file")
	t.Parallel()
	bin := litestreamBinary(t)
	buildProc(t)
	for _, checkpoint := range []string{"auto", "off"} {
		t.Run("checkpoint="+checkpoint, func(t *testing.T) {
			t.Parallel()
			testLitestream(t, bin, checkpoint, soak(20, 60))
		})
	}
}

func testLitestream(t *testing.T, bin, checkpoint string, seconds int) {
	dir := t.TempDir()
	path, replica := filepath.Join(dir, "jobs.db"), filepath.Join(dir, "replica")
	// The app's file exists, in WAL, before Litestream watches it.
	q, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	config := filepath.Join(dir, "litestream.yml")
	yml := fmt.Sprintf("dbs:\n  - path: %s\n    replica:\n      url: file://%s\n", path, replica)
	if err := os.WriteFile(config, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	ls := exec.Command(bin, "replicate", "-config", config)
	lsOut := new(output)
	ls.Stdout, ls.Stderr = lsOut, lsOut
	if err := ls.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if ls.ProcessState == nil {
			ls.Process.Kill()
			ls.Wait()
		}
		if t.Failed() {
			t.Logf("litestream's log:\n%s", lsOut)
		}
	}()

	app, out, _ := startProc(t, "replicate", path, checkpoint, strconv.Itoa(seconds))
	defer func() {
		if app.ProcessState == nil {
			app.Process.Kill()
			app.Wait()
		}
	}()
	var maxWAL atomic.Int64
	sampled := make(chan struct{})
	appDone, stopSampling := context.WithCancel(t.Context())
	defer stopSampling()
	go func() {
		defer close(sampled)
		for {
			if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > maxWAL.Load() {
				maxWAL.Store(fi.Size())
			}
			select {
			case <-appDone.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	var held []int64
	waitWithin(t, time.Minute, "the app's hold jobs to start, and 100 enqueues", func() bool {
		held = idsAfter(out.String(), "held")
		return len(held) == 2 && len(idsAfter(out.String(), "acked")) >= 100
	})
	midRun(t, bin, replica, dir, held)

	waitProc(t, app, time.Duration(seconds)*time.Second+time.Minute)
	stopSampling()
	<-sampled
	var report struct {
		ErrorsLogged int `json:"errors_logged"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil || report.ErrorsLogged != 0 {
		t.Fatalf("the app's report %q: %v; want no error logged", lines[len(lines)-1], err)
	}
	// Litestream syncs what is left of the -wal, then exits.
	ls.Process.Signal(syscall.SIGTERM)
	waitProc(t, ls, time.Minute)

	restored := restore(t, bin, replica, filepath.Join(dir, "restored.db"))
	acked := idsAfter(out.String(), "acked")
	src, dst := openReadOnly(t, path), openReadOnly(t, restored)
	for _, id := range acked {
		if _, err := dst.Get(t.Context(), id); err != nil {
			t.Fatalf("acknowledged job %d is not in the restore: %v", id, err)
		}
	}
	jobs := sameJobs(t, src, dst)
	h := health(t, dst)
	if !h.OK() || !slices.Equal(h.Integrity, []string{"ok"}) {
		t.Fatalf("check of the restore: integrity %q, problems %q", h.Integrity, h.Problems)
	}
	if sh := health(t, src); h.HistoryRows != sh.HistoryRows || h.Keys != sh.Keys || h.Keys == 0 {
		t.Fatalf("the restore has %d history rows and %d keys, the file %d and %d", h.HistoryRows, h.Keys, sh.HistoryRows, sh.Keys)
	}
	t.Logf("checkpoint %s: %d acknowledged enqueues in %d s, %d jobs and %d history rows and %d keys restored alike (%v); the -wal reached %.1f MiB",
		checkpoint, len(acked), seconds, len(jobs), h.HistoryRows, h.Keys, h.Jobs, float64(maxWAL.Load())/(1<<20))
}

// idsAfter returns the IDs of the lines "word ID" in the app's output.
func idsAfter(out, word string) []int64 {
	var ids []int64
	for line := range strings.Lines(out) {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), word+" "); ok {
			if id, err := strconv.ParseInt(s, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// restore restores the replica to out, a new file, and returns out,
// made private (see private).
func restore(t *testing.T, bin, replica, out string) string {
	t.Helper()
	if err := restoreOnce(bin, replica, out); err != nil {
		t.Fatal(err)
	}
	private(t, out)
	return out
}

// private makes a restored file 0600, as the README says to, after
// checking that Health warns of the mode that litestream gave it, if
// other users may read or write it.
func private(t *testing.T, out string) {
	t.Helper()
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o066 != 0 {
		r := openReadOnly(t, out)
		h := health(t, r)
		if !slices.ContainsFunc(h.Warnings, func(w string) bool { return strings.Contains(w, "chmod 600 ") && strings.Contains(w, out) }) {
			t.Errorf("restored with mode %04o: Health warns %q; want chmod 600", fi.Mode().Perm(), h.Warnings)
		}
		r.Close()
	}
	for _, p := range []string{out, out + "-wal"} {
		if err := os.Chmod(p, 0o600); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// restoreOnce runs litestream restore.
func restoreOnce(bin, replica, out string) error {
	cmd := exec.Command(bin, "restore", "-o", out, "file://"+replica)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("litestream restore: %v\n%s", err, b)
	}
	return nil
}

// midRun restores the replica while the app runs, until the restore holds
// the app's hold jobs running, and opens it as a machine that lost power
// would come back: the jobs that were running stay leased until their
// lease ends, then are rescued, a try counted, and run again.
func midRun(t *testing.T, bin, replica, dir string, held []int64) {
	t.Helper()
	var path string
	tries := 0
	waitWithin(t, time.Minute, "a restore with the hold jobs running", func() bool {
		tries++
		path = filepath.Join(dir, fmt.Sprintf("midrun-%d.db", tries))
		if err := restoreOnce(bin, replica, path); err != nil {
			if !strings.Contains(err.Error(), "no matching backup files") {
				t.Fatal(err)
			}
			return false // no snapshot in the replica yet
		}
		private(t, path)
		r := openReadOnly(t, path)
		running, err := r.List(t.Context(), litequeue.Filter{State: litequeue.Running})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		return allRunning(running, held)
	})
	clk := newMock()
	clk.Set(time.Now()) // the app's timestamps are of the real clock
	q := openAt(t, path, litequeue.Options{Clock: clk})
	q.Handle("hold", func(context.Context, *litequeue.Job) error { return nil })
	q.Handle("task", func(context.Context, *litequeue.Job) error { return nil })
	running, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Running})
	if err != nil {
		t.Fatal(err)
	}
	if !allRunning(running, held) {
		t.Fatalf("the hold jobs %v are not all running in the mid-run restore %s", held, path)
	}
	before := make(map[int64][]litequeue.Attempt)
	for _, j := range running {
		before[j.ID] = history(t, q, j.ID)
	}
	runDue(t, q)
	for _, j := range running {
		if got := get(t, q, j.ID); got.State != litequeue.Running {
			t.Fatalf("job %d, running in the restore, is %s before its lease ended", j.ID, got.State)
		}
	}
	clk.Add(litequeue.DefaultVisibilityTimeout + time.Second)
	runDue(t, q) // rescues every lease, and the jobs wait for their retry
	clk.Add(time.Minute)
	runDue(t, q)
	for _, j := range running {
		got, hist := get(t, q, j.ID), history(t, q, j.ID)
		if got.State != litequeue.Completed || got.Attempt != j.Attempt+1 {
			t.Fatalf("job %d, running attempt %d in the restore: %s, attempt %d; want completed on attempt %d", j.ID, j.Attempt, got.State, got.Attempt, j.Attempt+1)
		}
		old := before[j.ID]
		if len(hist) != len(old)+2 || !cmp.Equal(hist[:len(old)], old) {
			t.Fatalf("job %d: history %v, was %v; want two runs more", j.ID, outcomes(hist), outcomes(old))
		}
		lost := hist[len(old)]
		if lost.Outcome != litequeue.OutcomeLeaseExpired || lost.Worker != "replicated" || lost.Attempt != j.Attempt || hist[len(old)+1].Outcome != litequeue.OutcomeCompleted {
			t.Fatalf("job %d: the runs after the restore %+v; want lease_expired by the app's worker, then completed", j.ID, hist[len(old):])
		}
	}
	t.Logf("mid-run restore %s (%d tries): %d running jobs, rescued after their lease and completed", filepath.Base(path), tries, len(running))
}

// allRunning reports whether every job of ids is among the running jobs.
func allRunning(running []*litequeue.Job, ids []int64) bool {
	for _, id := range ids {
		if !slices.ContainsFunc(running, func(j *litequeue.Job) bool { return j.ID == id }) {
			return false
		}
	}
	return true
}

// sameJobs checks that dst holds the jobs of src, each with its history,
// and returns them.
func sameJobs(t *testing.T, src, dst *litequeue.Queue) []*litequeue.Job {
	t.Helper()
	want, err := src.List(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.List(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(litequeue.Job{})); diff != "" {
		t.Fatalf("the restore's jobs differ from the file's (-file +restore):\n%s", diff)
	}
	for _, j := range want {
		if diff := cmp.Diff(history(t, src, j.ID), history(t, dst, j.ID)); diff != "" {
			t.Fatalf("job %d: the restore's history differs (-file +restore):\n%s", j.ID, diff)
		}
	}
	return want
}
