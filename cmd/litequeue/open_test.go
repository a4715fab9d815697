package main

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestWrite_ForeignFile runs each command that writes on the app's own
// SQLite file, without litequeue's tables: each refuses, saying why in
// words about --db, not the library's, and leaves the file byte for byte as it was, with no -wal, -shm or -lock
// beside it.
func TestWrite_ForeignFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"cancel", "5"},
		{"enqueue", "email.send"},
		{"dead", "retry", "5"},
		{"dead", "retry", "--all", "--yes"},
		{"dead", "purge", "--yes"},
	} {
		c := testCLI("")
		c.db = path
		r := runCLI(t, c, args...)
		if want := path + " has no litequeue tables: is --db the app's database?"; r.code != exitFailure || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "Open") {
			t.Errorf("litequeue %s: exit %d, stderr %q; want exit 1 saying %q, in the command's words (not the library's Open)",
				strings.Join(args, " "), r.code, r.stderr, want)
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("litequeue %s changed the app's file", strings.Join(args, " "))
		}
		for _, side := range []string{"-wal", "-shm", "-lock"} {
			if _, err := os.Lstat(path + side); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("litequeue %s left %s%s (%v)", strings.Join(args, " "), filepath.Base(path), side, err)
			}
		}
	}
}

func TestInspect_MissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	for _, args := range [][]string{
		{"list"}, {"show", "1"}, {"dead", "list"}, {"check"},
		{"enqueue", "k"},
	} {
		c := testCLI("")
		c.db = path
		r := runCLI(t, c, args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, path+" does not exist") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and that the path does not exist", args, r.code, r.stderr)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, path)
		}
	}
}

func TestDBPath(t *testing.T) {
	fx := newFixture(t)
	c := testCLI("")
	c.getenv = func(k string) string {
		if k == "LITEQUEUE_DB" {
			return fx.path
		}
		return ""
	}
	r := mustRun(t, c, "dead", "list", "--json")
	if !strings.Contains(r.stdout, `"bounce@example.com"`) && !strings.Contains(r.stdout, fmt.Sprintf(`"id": %d`, fx.bounced)) {
		t.Errorf("$LITEQUEUE_DB was not used:\n%s", r.stdout)
	}
	// --db, before or after the command, wins over the environment.
	other := filepath.Join(t.TempDir(), "other.db")
	for _, args := range [][]string{{"--db", other, "list"}, {"list", "--db", other}} {
		r := runCLI(t, c, args...)
		if !strings.Contains(r.stderr, other+" does not exist") {
			t.Errorf("%v: stderr %q, want it to name %s", args, r.stderr, other)
		}
	}
}

// TestRedact hides a server's password wherever the URL has it, and
// leaves a file's path as it is.
func TestRedact(t *testing.T) {
	for db, want := range map[string]string{
		"jobs.db":                               "jobs.db",
		"postgres://u:secret@h/db":              "postgres://u:xxxxx@h/db",
		"postgres://u@h/db?password=secret&x=1": "postgres://u@h/db?password=xxxxx&x=1",
	} {
		if got := redact(db); got != want {
			t.Errorf("redact(%q) = %q, want %q", db, got, want)
		}
	}
}
