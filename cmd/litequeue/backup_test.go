package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBackup writes a backup of the fixture, which check passes as a
// sound backup with the fixture's jobs.
func TestBackup(t *testing.T) {
	fx := newFixture(t)
	to := filepath.Join(t.TempDir(), "copy.db")
	r := mustRun(t, fx.cli(""), "backup", "--to", to)
	for _, want := range []string{"wrote " + to + " (", "a snapshot of " + fx.path + "\n", "check it with: litequeue check --db " + to + "\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("backup does not say %q:\n%s", want, r.stdout)
		}
	}
	fi, err := os.Stat(to)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the backup has mode %v, want 0600", fi.Mode())
	}

	c := fx.cli("")
	c.db = to
	r = mustRun(t, c, "check")
	if !strings.Contains(r.stdout, "\nok: a sound backup") || strings.Contains(r.stdout, "warning") {
		t.Errorf("check of the backup:\n%s", r.stdout)
	}
	r = mustRun(t, c, "check", "--json")
	var got checkJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	want := map[string]int{"waiting": 0, "pending": 3, "running": 0, "completed": 1, "dead": 2, "discarded": 1, "cancelled": 0, "expired": 0}
	if !got.OK || !got.Backup || got.JournalMode != "delete" || len(got.Warnings) != 0 {
		t.Errorf("check --json of the backup: %+v", got)
	}
	if diff := cmp.Diff(want, got.Jobs); diff != "" {
		t.Errorf("jobs in the backup (-want +got):\n%s", diff)
	}
}

// TestBackup_Exists: backup leaves a file at --to as it was, unless
// --force.
func TestBackup_Exists(t *testing.T) {
	fx := newFixture(t)
	to := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(to, []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, fx.cli(""), "backup", "--to", to)
	if want := "litequeue: backup to " + to + ": file already exists (--force replaces it)\n"; r.code != exitFailure || r.stderr != want {
		t.Errorf("backup over a file: exit %d, stderr %q; want %d, %q", r.code, r.stderr, exitFailure, want)
	}
	if data, err := os.ReadFile(to); err != nil || string(data) != "notes" {
		t.Fatalf("the refused file holds %q (%v)", data, err)
	}
	mustRun(t, fx.cli(""), "backup", "--to", to, "--force")
	c := fx.cli("")
	c.db = to
	if r := mustRun(t, c, "check"); !strings.Contains(r.stdout, "\nok: a sound backup") {
		t.Errorf("check of the replaced file:\n%s", r.stdout)
	}
}

// TestBackup_Usage: backup needs --to, and a database that exists.
func TestBackup_Usage(t *testing.T) {
	dir := t.TempDir()
	c := testCLI("")
	c.db = filepath.Join(dir, "jobs.db")
	r := runCLI(t, c, "backup")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--to is missing") || !strings.Contains(r.stderr, "usage: litequeue backup --to PATH [--force]") {
		t.Errorf("backup without --to: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	to := filepath.Join(dir, "copy.db")
	r = runCLI(t, c, "backup", "--to", to)
	if r.code != exitFailure || !strings.Contains(r.stderr, c.db+" does not exist") {
		t.Errorf("backup of a missing database: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(to); !os.IsNotExist(err) {
		t.Errorf("a failed backup left %s: %v", to, err)
	}
}

// TestBackup_Server: backup of a --db that names a PostgreSQL server is a
// usage error that says to back the server up with its own tools, in the
// command's words, before anything dials the server.
func TestBackup_Server(t *testing.T) {
	c := testCLI("")
	c.db = "postgres://ada:secret@127.0.0.1:1/jobs"
	to := filepath.Join(t.TempDir(), "copy.db")
	r := runCLI(t, c, "backup", "--to", to)
	want := "--db names a PostgreSQL server, which has no file to copy: back it up with its own tools (pg_dump)"
	if r.code != exitUsage || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "secret") {
		t.Errorf("backup of a server: exit %d, stderr %q; want %d, saying %q", r.code, r.stderr, exitUsage, want)
	}
	if _, err := os.Stat(to); !os.IsNotExist(err) {
		t.Errorf("the refused backup made %s: %v", to, err)
	}
}
