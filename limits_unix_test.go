//go:build unix

package litequeue_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestProcess_MaxRunning runs 4 processes × 8 workers on one database
// (proc limits), each enqueueing jobs of a kind with MaxRunning(1), and
// jobs of a kind without a limit while those run: each run of the limited kind counts itself in
// and out of an app table in the same database, and records how many were
// in progress when it began; never more than one, in any process. The
// other kind runs meanwhile.
func TestProcess_MaxRunning(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	q := openAt(t, path, litequeue.Options{})
	for _, stmt := range []string{
		`CREATE TABLE limit_inside (n INTEGER NOT NULL)`,
		`INSERT INTO limit_inside (n) VALUES (0)`,
		`CREATE TABLE limit_runs (job_id INTEGER NOT NULL, proc TEXT NOT NULL, kind TEXT NOT NULL, inside INTEGER NOT NULL)`,
	} {
		if _, err := q.DB().Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	const procs = 4
	perProc := soak(40, 400)
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*output, procs)
	for i := range cmds {
		cmds[i], outs[i], _ = startProc(t, "limits", path, "p"+strconv.Itoa(i), strconv.Itoa(perProc))
	}
	for i, cmd := range cmds {
		waitProc(t, cmd, 5*time.Minute)
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
	var rows []struct {
		Kind   string `db:"kind"`
		Runs   int    `db:"runs"`
		Jobs   int    `db:"jobs"`
		Procs  int    `db:"procs"`
		Most   int    `db:"most"`
		Beside int    `db:"beside"` // runs that began while a limited run was in progress
	}
	err := q.DB().Select(&rows, `SELECT kind, COUNT(*) AS runs, COUNT(DISTINCT job_id) AS jobs, COUNT(DISTINCT proc) AS procs,
		MAX(inside) AS most, SUM(CASE WHEN inside > 0 THEN 1 ELSE 0 END) AS beside
		FROM limit_runs GROUP BY kind ORDER BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Kind != "mutex" || rows[1].Kind != "other" {
		t.Fatalf("runs per kind: %+v, want mutex and other", rows)
	}
	mutex, other := rows[0], rows[1]
	if mutex.Jobs != procs*perProc {
		t.Errorf("%d jobs of the limited kind ran, want %d", mutex.Jobs, procs*perProc)
	}
	if mutex.Most != 1 {
		t.Errorf("up to %d runs of the MaxRunning(1) kind were in progress at once, want 1", mutex.Most)
	}
	if other.Beside == 0 {
		t.Errorf("no run of the other kind began while a limited run was in progress")
	}
	completed, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Completed})
	if err != nil {
		t.Fatal(err)
	}
	if len(completed) != procs*perProc+other.Jobs {
		t.Errorf("%d jobs completed, want %d", len(completed), procs*perProc+other.Jobs)
	}
	t.Logf("%d processes × 8 workers: %d runs of the MaxRunning(1) kind in %d processes, at most %d at once; %d runs of the other kind, %d of them beside a limited run",
		procs, mutex.Runs, mutex.Procs, mutex.Most, other.Runs, other.Beside)
}
