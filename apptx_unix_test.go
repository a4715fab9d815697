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

// TestProcess_AppTransactions runs 4 processes of 8 workers on one file,
// each enqueueing jobs and making app write transactions through WriteTx
// between the enqueues, while its handlers write their side effects with
// SeenTx, MarkTx and CompleteTx in WriteTx too. No error reaches any of
// them (no SQLITE_BUSY), every app transaction commits (its counter
// increments none lost), and every job's side effect exists once.
func TestProcess_AppTransactions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "q.db")
	q := openAt(t, path, litequeue.Options{})
	for _, stmt := range []string{
		`CREATE TABLE effects (job_id INTEGER NOT NULL, worker TEXT NOT NULL)`,
		`CREATE TABLE app_ledger (proc TEXT NOT NULL, i INTEGER NOT NULL)`,
		`CREATE TABLE app_counter (n INTEGER NOT NULL)`,
		`INSERT INTO app_counter (n) VALUES (0)`,
	} {
		if _, err := q.DB().Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	const procs = 4
	perProc := soak(200, 2000)
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*output, procs)
	for i := range cmds {
		cmds[i], outs[i], _ = startProc(t, "apptx", path, "p"+strconv.Itoa(i), strconv.Itoa(perProc), "writetx")
	}
	for i, cmd := range cmds {
		waitProc(t, cmd, 5*time.Minute)
		var report struct {
			Committed    int      `json:"app_tx_committed"`
			Errors       []string `json:"errors"`
			ErrorsLogged int      `json:"errors_logged"`
		}
		if err := json.Unmarshal([]byte(outs[i].String()), &report); err != nil {
			t.Fatalf("process %d report %q: %v", i, outs[i], err)
		}
		if len(report.Errors) > 0 {
			t.Errorf("process %d: %d errors, the first: %s", i, len(report.Errors), report.Errors[0])
		}
		if report.ErrorsLogged != 0 {
			t.Errorf("process %d logged %d errors", i, report.ErrorsLogged)
		}
		if report.Committed != perProc {
			t.Errorf("process %d committed %d app transactions, want %d", i, report.Committed, perProc)
		}
	}
	var ledger, counter int
	if err := q.DB().Get(&ledger, `SELECT COUNT(*) FROM app_ledger`); err != nil {
		t.Fatal(err)
	}
	if err := q.DB().Get(&counter, `SELECT n FROM app_counter`); err != nil {
		t.Fatal(err)
	}
	if want := procs * perProc; ledger != want || counter != want {
		t.Errorf("%d ledger rows and a counter of %d, want %d of each", ledger, counter, want)
	}
	fx := effects(t, q)
	if len(fx) != procs*perProc {
		t.Errorf("%d jobs had their side effect, want %d", len(fx), procs*perProc)
	}
	for id, n := range fx {
		if n != 1 {
			t.Errorf("job %d: %d side effects", id, n)
		}
	}
	t.Logf("%d processes × 8 workers: %d jobs and %d app transactions", procs, procs*perProc, ledger)
}
