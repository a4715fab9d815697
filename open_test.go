package litequeue_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/litequeue/litequeue"
)

// sqliteFile creates a plain SQLite file (not through litequeue) and runs
// the statements on it.
func sqliteFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpen_Refuses(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"not SQLite", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("name,age\nann,41\n"), 0o600)
		}, "is not a SQLite database"},
		{"one byte", func(t *testing.T, path string) {
			os.WriteFile(path, []byte("x"), 0o600) // SQLite would read it as an empty database
		}, "is not a SQLite database"},
		{"another application's file", func(t *testing.T, path string) {
			sqliteFile(t, path, `PRAGMA application_id = 1234`, `CREATE TABLE notes (body TEXT)`)
		}, "belongs to another application (application_id 0x4d2)"},
		{"a newer schema", func(t *testing.T, path string) {
			q, err := litequeue.Open(path, litequeue.Options{})
			if err != nil {
				t.Fatal(err)
			}
			q.Close()
			sqliteFile(t, path, `UPDATE litequeue_meta SET value = '99' WHERE name = 'schema_version'`)
		}, "has litequeue schema version 99, newer than this binary's 5"},
		{"a truncated file", func(t *testing.T, path string) {
			sqliteFile(t, path, `CREATE TABLE notes (body TEXT)`, `INSERT INTO notes VALUES (zeroblob(100000))`)
			b := readFile(t, path)
			os.WriteFile(path, b[:len(b)/2], 0o600)
		}, "database disk image is malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "app.db")
			tt.make(t, path)
			before := readFile(t, path)
			q, err := litequeue.Open(path, litequeue.Options{})
			if err == nil {
				q.Close()
				t.Fatal("Open succeeded, want a refusal")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open: %v, want an error containing %q", err, tt.want)
			}
			if after := readFile(t, path); !bytes.Equal(before, after) {
				t.Fatal("the refused file was changed")
			}
		})
	}
}

// TestOpen_AdoptsAppFile opens a file that already holds the app's own
// tables and user_version: litequeue adds its tables and leaves the app's
// data and user_version alone.
func TestOpen_AdoptsAppFile(t *testing.T) {
	fileOnly(t, "the app's own file")
	path := filepath.Join(t.TempDir(), "app.db")
	sqliteFile(t, path, `PRAGMA user_version = 7`, `CREATE TABLE notes (body TEXT)`, `INSERT INTO notes VALUES ('hello')`)
	q := openAt(t, path, litequeue.Options{})
	enqueue(t, q, "k", nil)
	var version int
	var body string
	if err := q.DB().Get(&version, `PRAGMA user_version`); err != nil || version != 7 {
		t.Fatalf("user_version = %d (%v), want 7", version, err)
	}
	if err := q.DB().Get(&body, `SELECT body FROM notes`); err != nil || body != "hello" {
		t.Fatalf("app row = %q (%v)", body, err)
	}
}

// TestOpen_PathIsNotADSN shows that a path cannot carry driver parameters.
func TestOpen_PathIsNotADSN(t *testing.T) {
	fileOnly(t, "a file path")
	dir := t.TempDir()
	for _, name := range []string{"q.db?_pragma=journal_mode(OFF)", "file:q.db?_pragma=journal_mode(DELETE)"} {
		if runtime.GOOS == "windows" {
			t.Skip("'?' and ':' are not allowed in Windows file names")
		}
		path := filepath.Join(dir, name)
		q := openAt(t, path, litequeue.Options{})
		var mode string
		if err := q.DB().Get(&mode, `PRAGMA journal_mode`); err != nil || mode != "wal" {
			t.Fatalf("%s: journal_mode %q (%v), want wal", name, mode, err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s: the file was not created under its literal name: %v", name, err)
		}
	}
}

// TestOpen_FileModes checks that the database and its -wal and -shm files
// (and the write lock beside them) are created readable by their owner only.
func TestOpen_FileModes(t *testing.T) {
	fileOnly(t, "file modes")
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	q, path := openQueue(t, litequeue.Options{})
	enqueue(t, q, "k", nil)
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-lock"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(p), got)
		}
	}
}

func TestQueue_Close(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{})
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, "k", nil); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("Enqueue after Close: %v, want ErrClosed", err)
	}
	if _, err := q.EnqueueMany(ctx, "k", nil); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("EnqueueMany of nothing after Close: %v, want ErrClosed", err)
	}
	if _, err := q.RunDue(ctx); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("RunDue after Close: %v, want ErrClosed", err)
	}
	if err := q.Work(ctx, litequeue.WorkerOptions{}); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("Work after Close: %v, want ErrClosed", err)
	}
	if _, err := q.Get(ctx, 1); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
}

func TestOpen_BadOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	for _, tt := range []struct {
		opts litequeue.Options
		want string
	}{
		{litequeue.Options{Retry: litequeue.Policy{MaxTries: 51}}, "retry policy: max_tries 51 is over the limit of 50"},
		{litequeue.Options{Policies: map[string]litequeue.Policy{"slow": {Ceiling: 25 * 3600e9}}}, `retry policy "slow": ceiling 25h0m0s is over the limit of 24h0m0s`},
		{litequeue.Options{Synchronous: "off"}, `synchronous "off" is unknown`},
		{litequeue.Options{Checkpoint: "never"}, `checkpoint "never" is unknown (want auto or off)`},
		{litequeue.Options{Policies: map[string]litequeue.Policy{"": {MaxTries: 3}}}, `retry policy "": a named policy needs a name`},
	} {
		_, err := litequeue.Open(path, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open: %v, want an error containing %q", err, tt.want)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused options created the file: %v", err)
	}
}

// TestOpenReadOnly inspects a file another Queue works on, and refuses to
// create or adopt one.
func TestOpenReadOnly(t *testing.T) {
	fileOnly(t, "OpenReadOnly opens a file")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := litequeue.OpenReadOnly(missing, litequeue.Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenReadOnly of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("OpenReadOnly created the file")
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database, and long enough to have a header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{text: "the file is not a SQLite database", dir: "it is a directory"} {
		if _, err := litequeue.OpenReadOnly(path, litequeue.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenReadOnly(%s): %v, want an error saying %q", path, err, want)
		}
		if _, err := litequeue.Open(path, litequeue.Options{}); err == nil || !strings.Contains(err.Error(), want) && !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("Open(%s): %v, want an error saying %q", path, err, want)
		}
	}
	plain := filepath.Join(dir, "plain.db")
	sqliteFile(t, plain, `CREATE TABLE notes (body TEXT)`)
	if _, err := litequeue.OpenReadOnly(plain, litequeue.Options{}); err == nil || !strings.Contains(err.Error(), "no litequeue tables") {
		t.Fatalf("OpenReadOnly of a file without litequeue's tables: %v", err)
	}

	q, path := openQueue(t, litequeue.Options{})
	j := enqueue(t, q, "k", "hello")
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := get(t, ro, j.ID); string(got.Payload) != `"hello"` {
		t.Fatalf("read-only Get = %+v", got)
	}
	if _, err := ro.Enqueue(context.Background(), "k", nil); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("Enqueue on a read-only queue: %v, want ErrReadOnly", err)
	}
	if tx, err := ro.DB().BeginTxx(t.Context(), &sql.TxOptions{ReadOnly: true}); err != nil {
		t.Fatal(err)
	} else {
		if _, err := ro.EnqueueTx(t.Context(), tx, "k", nil); !errors.Is(err, litequeue.ErrReadOnly) {
			t.Fatalf("EnqueueTx on a read-only queue: %v, want ErrReadOnly", err)
		}
		tx.Rollback()
	}
	ro.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
	if err := ro.Work(context.Background(), litequeue.WorkerOptions{}); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("Work on a read-only queue: %v, want ErrReadOnly at once", err)
	}
	if _, err := ro.RunDue(context.Background()); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("RunDue on a read-only queue: %v, want ErrReadOnly", err)
	}
	enqueue(t, q, "k", "more") // the writer goes on meanwhile
	if jobs, err := ro.List(context.Background(), litequeue.Filter{}); err != nil || len(jobs) != 2 {
		t.Fatalf("read-only List: %d jobs, %v; want 2", len(jobs), err)
	}
}

// TestOpen_MigratesVersion1 opens a file of schema version 1 (its state
// index over every row): Open moves it to version 4 (the finished index,
// partial; see also TestOpen_MigratesToVersion3) and keeps every job and
// its history.
func TestOpen_MigratesVersion1(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("k", doomed)
	dead := enqueue(t, q, "k", nil)
	runDue(t, q)
	waiting := enqueue(t, q, "later", nil, litequeue.Delay(time.Hour))
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	// Version 1 as it was written.
	sqliteFile(t, path,
		`DROP INDEX litequeue_jobs_finished`,
		`CREATE INDEX litequeue_jobs_state ON litequeue_jobs (state, finished_at)`,
		`UPDATE litequeue_meta SET value = '1' WHERE name = 'schema_version'`)

	q = openAt(t, path, litequeue.Options{Clock: clk})
	var version string
	if err := q.DB().Get(&version, `SELECT value FROM litequeue_meta WHERE name = 'schema_version'`); err != nil || version != "5" {
		t.Fatalf("schema version %q (%v), want 5", version, err)
	}
	var indexes []string
	if err := q.DB().Select(&indexes, `SELECT name FROM sqlite_schema WHERE type = 'index' AND name IN ('litequeue_jobs_state', 'litequeue_jobs_finished')`); err != nil {
		t.Fatal(err)
	}
	if len(indexes) != 1 || indexes[0] != "litequeue_jobs_finished" {
		t.Fatalf("indexes after the migration: %v, want only litequeue_jobs_finished", indexes)
	}
	if got := get(t, q, dead.ID); got.State != litequeue.Dead || len(history(t, q, dead.ID)) != 1 {
		t.Fatalf("the dead job after the migration: %s with %d history rows", got.State, len(history(t, q, dead.ID)))
	}
	if got := get(t, q, waiting.ID); got.State != litequeue.Pending {
		t.Fatalf("the waiting job after the migration: %s", got.State)
	}
	if deadJobs, err := q.List(context.Background(), litequeue.Filter{State: litequeue.Dead}); err != nil || len(deadJobs) != 1 {
		t.Fatalf("List dead after the migration: %d jobs, %v", len(deadJobs), err)
	}
}

// TestOpen_LockFileSymlink: a symbolic link planted as the -lock file (in
// a directory others may write, pointing at a system file) is refused:
// Open neither creates nor opens the file it points at.
func TestOpen_LockFileSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("making a symbolic link needs a privilege on Windows")
	}
	t.Parallel()
	dir, system := t.TempDir(), t.TempDir()
	missing := filepath.Join(system, "nologin")
	path := filepath.Join(dir, "new.db")
	if err := os.Symlink(missing, path+"-lock"); err != nil {
		t.Fatal(err)
	}
	_, err := litequeue.Open(path, litequeue.Options{})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Open with a -lock link to a missing file: %v, want a refusal naming the symbolic link", err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created the file the -lock link points at: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created the database before it refused the -lock: %v", err)
	}

	existing := filepath.Join(system, "passwd")
	if err := os.WriteFile(existing, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "q.db")
	if err := os.Symlink(existing, path+"-lock"); err != nil {
		t.Fatal(err)
	}
	q, err := litequeue.Open(path, litequeue.Options{})
	if err == nil {
		q.Close()
		t.Fatal("Open used a -lock link to an existing file")
	}
	if !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Open: %v, want a refusal naming the symbolic link", err)
	}
	if got := string(readFile(t, existing)); got != "root:x:0:0\n" {
		t.Errorf("the linked file now holds %q", got)
	}
}

// TestOpenExisting writes to a litequeue file, and refuses, leaving them
// byte for byte as they were and with nothing beside them, the files that
// Open would create or adopt.
func TestOpenExisting(t *testing.T) {
	fileOnly(t, "OpenExisting opens a file")
	t.Parallel()
	dir := t.TempDir()
	app := filepath.Join(dir, "app.db")
	sqliteFile(t, app, `CREATE TABLE users (id INTEGER)`, `INSERT INTO users VALUES (7)`)
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{app, empty} {
		before := readFile(t, path)
		q, err := litequeue.OpenExisting(path, litequeue.Options{})
		if err == nil {
			q.Close()
			t.Fatalf("OpenExisting(%s) succeeded", filepath.Base(path))
		}
		if !strings.Contains(err.Error(), "has no litequeue tables") {
			t.Errorf("OpenExisting(%s): %v, want an error saying it has no litequeue tables", filepath.Base(path), err)
		}
		if after := readFile(t, path); !bytes.Equal(before, after) {
			t.Errorf("OpenExisting changed %s", filepath.Base(path))
		}
		for _, side := range []string{"-wal", "-shm", "-lock", "-journal"} {
			if _, err := os.Lstat(path + side); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s%s is there after the refusal (%v)", filepath.Base(path), side, err)
			}
		}
	}
	missing := filepath.Join(dir, "missing.db")
	if _, err := litequeue.OpenExisting(missing, litequeue.Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenExisting of a missing file: %v, want ErrNotExist", err)
	}
	if entries, _ := filepath.Glob(missing + "*"); len(entries) != 0 {
		t.Errorf("OpenExisting of a missing file made %v", entries)
	}

	q, path := openQueue(t, litequeue.Options{})
	j := enqueue(t, q, "k", nil)
	q2, err := litequeue.OpenExisting(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if err := q2.Cancel(t.Context(), j.ID); err != nil {
		t.Fatalf("Cancel through OpenExisting: %v", err)
	}
	if got := get(t, q, j.ID); got.State != litequeue.Cancelled {
		t.Fatalf("the job is %s, want cancelled", got.State)
	}
}
