package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

func TestCheck(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "check", "--json")
	var got checkJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	if !got.OK || len(got.Problems) != 0 || got.SchemaVersion != "7" || got.JournalMode != "wal" ||
		got.ApplicationID != 0x4c515545 /* "LQUE" */ || got.FileBytes == 0 {
		t.Errorf("check --json: %+v", got)
	}
	want := map[string]int{"waiting": 0, "pending": 3, "running": 0, "completed": 1, "dead": 2, "discarded": 1, "cancelled": 0, "expired": 0}
	if diff := cmp.Diff(want, got.Jobs); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	if got.HistoryRows == nil || *got.HistoryRows != 6 || got.Keys == nil || *got.Keys != 0 {
		t.Errorf("history rows %s, keys %s; want 6 and 0", orDashInt(got.HistoryRows), orDashInt(got.Keys))
	}

	r = mustRun(t, fx.cli(""), "check")
	for _, want := range []string{"integrity         ok\n", "jobs              7: 0 waiting, 3 pending, 0 running, 1 completed, 2 dead, 1 discarded, 0 cancelled, 0 expired\n", "\nok\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check does not say %q:\n%s", want, r.stdout)
		}
	}
}

func TestCheck_Corrupt(t *testing.T) {
	fx := newFixture(t)
	// Overwrite the b-tree headers of the keys table's root page and its
	// index's: what a failing disk might leave.
	data, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	for _, p := range keysRootPages(t, data) {
		start := (p - 1) * page
		for i := start + 1; i < start+8; i++ {
			data[i] = 0xa5
		}
	}
	if err := os.WriteFile(fx.path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, fx.cli(""), "check")
	t.Logf("check on a corrupt file:\n%s%s", r.stdout, r.stderr)
	if r.code != exitFailure {
		t.Fatalf("exit %d, want 1; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "problem: ") {
		t.Errorf("check does not say what is wrong:\n%s%s", r.stdout, r.stderr)
	}
	// The damaged page is the keys table's: its count shows as unknown,
	// not as 0.
	if !strings.Contains(r.stdout, "idempotency keys  -\n") || !strings.Contains(r.stdout, "problem: count idempotency keys") {
		t.Errorf("check shows a count it could not make:\n%s", r.stdout)
	}
}

// keysRootPages finds the root pages of the idempotency keys' table and
// of its index in the bytes of a small database file, without SQLite: in
// the schema table's record of a table or an index, the values "table" or
// "index", its name, its table's name and its root page follow each
// other, the page (below 128 in a small file) as a one-byte integer.
func keysRootPages(t *testing.T, data []byte) []int {
	t.Helper()
	const table = "litequeue_" + "keys"
	var pages []int
	for _, marker := range []string{"table" + table + table, "index" + table + "_expiry" + table} {
		i := bytes.Index(data, []byte(marker))
		if i < 0 || i+len(marker) >= len(data) {
			t.Fatalf("no schema record %q in the file", marker)
		}
		pages = append(pages, int(data[i+len(marker)]))
	}
	return pages
}

// TestCheck_Colour: check paints "ok" green on a terminal, but not for
// TERM=dumb, nor with NO_COLOR set.
func TestCheck_Colour(t *testing.T) {
	fx := newFixture(t)
	for _, tt := range []struct {
		env    map[string]string
		colour bool
	}{
		{map[string]string{"TERM": "xterm-256color"}, true},
		{map[string]string{"TERM": "dumb"}, false},
		{map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}, false},
	} {
		c := fx.cli("")
		c.stdoutTTY = true
		c.getenv = func(k string) string { return tt.env[k] }
		r := mustRun(t, c, "check")
		if got := strings.Contains(r.stdout, "\x1b["); got != tt.colour {
			t.Errorf("check on a terminal with %v: colour codes %v, want %v:\n%q", tt.env, got, tt.colour, r.stdout)
		}
	}
}

// TestCheck_DeletedWAL deletes the -wal of a file an app has open: check
// says what happened and what to do, not only SQLite's "disk I/O error",
// whether that error comes from the queries of its report or, once the
// file's first page is in the -wal too, from opening the file. Doing what
// it says, stopping the app cleanly, brings the file back with every
// commit.
func TestCheck_DeletedWAL(t *testing.T) {
	for _, tt := range []struct {
		name string
		jobs int
	}{{"one job", 1}, {"a grown file", 50}} {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			app, err := litequeue.Open(fx.path, litequeue.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close()
			var last *litequeue.Job
			for i := range tt.jobs {
				if last, err = app.Enqueue(t.Context(), "email.send", fmt.Sprintf("late%d@example.com %s", i, strings.Repeat("x", 4000))); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Remove(fx.path + "-wal"); err != nil {
				t.Fatal(err)
			}
			r := runCLI(t, fx.cli(""), "check")
			t.Logf("check on a file whose -wal was deleted:\n%s%s", r.stdout, r.stderr)
			if r.code != exitFailure {
				t.Fatalf("exit %d, want 1", r.code)
			}
			for _, want := range []string{"the -wal was deleted or cut short while a process had the database open", "stop the app cleanly"} {
				if !strings.Contains(r.stdout+r.stderr, want) {
					t.Errorf("check does not say %q", want)
				}
			}
			if err := app.Close(); err != nil {
				t.Fatal(err)
			}
			r = mustRun(t, fx.cli(""), "show", fmt.Sprint(last.ID))
			if !strings.Contains(r.stdout, fmt.Sprintf("late%d@example.com", tt.jobs-1)) {
				t.Errorf("after the app's Close the last job enqueued into the deleted -wal is not there:\n%s", r.stdout)
			}
			mustRun(t, fx.cli(""), "check")
		})
	}
}

// TestCheck_Backup: a sound VACUUM INTO backup is in journal mode delete,
// not wal. check says it is a sound backup, and warns of the mode 0644
// that VACUUM INTO gives it.
func TestCheck_Backup(t *testing.T) {
	fx := newFixture(t)
	backup := filepath.Join(t.TempDir(), "backup.db")
	db, err := sql.Open("sqlite", fx.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`VACUUM INTO ?`, backup); err != nil {
		t.Fatal(err)
	}
	c := fx.cli("")
	c.db = backup
	r := mustRun(t, c, "check")
	for _, want := range []string{"journal mode      delete\n", "has mode 0644", "chmod 600 " + backup + "\n", "\nok: a sound backup"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check of a backup does not say %q:\n%s", want, r.stdout)
		}
	}
}

// TestCheck_RepairCounts: check reports a kept count of the jobs that
// differs from a recount as a problem and changes nothing; check --repair
// rewrites the counts, says how many differed, and finds the file ok.
func TestCheck_RepairCounts(t *testing.T) {
	fx := newFixture(t)
	db, err := sql.Open("sqlite", fx.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE litequeue_counts SET n = n + 3 WHERE state = 'dead'`); err != nil {
		t.Fatal(err)
	}
	for range 2 { // check only reads: the second finds the same
		r := runCLI(t, fx.cli(""), "check")
		if r.code != exitFailure || !strings.Contains(r.stdout, `the kept count of the dead jobs of kind "email.send" in queue "default" is 4, a recount finds 1`) {
			t.Fatalf("check of a wrong count: exit %d, want 1, and the count named:\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	r := mustRun(t, fx.cli(""), "check", "--repair")
	if !strings.Contains(r.stdout, "counts            2 rewritten from a recount\n") || !strings.HasSuffix(r.stdout, "\nok\n") {
		t.Errorf("check --repair:\n%s", r.stdout)
	}
	r = mustRun(t, fx.cli(""), "check", "--repair", "--json")
	var got checkJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	if !got.OK || got.Repaired == nil || *got.Repaired != 0 {
		t.Errorf("check --repair --json after a repair: %+v", got)
	}
}
