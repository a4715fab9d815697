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

	"github.com/litequeue/litequeue"
)

// TestQueue_NilContext calls every method that takes a context with a nil
// one: each refuses it with an error that says so, and the Queue goes on
// working (database/sql panics on a nil context while holding its pool's
// lock, which would leave every later call waiting forever).
func TestQueue_NilContext(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("task", func(context.Context, *litequeue.Job) error { return nil })
	job := enqueue(t, q, "task", nil)
	tx, err := q.DB().BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	var nilCtx context.Context
	calls := map[string]func() error{
		"Get":     func() error { _, err := q.Get(nilCtx, job.ID); return err },
		"History": func() error { _, err := q.History(nilCtx, job.ID); return err },
		"List":    func() error { _, err := q.List(nilCtx, litequeue.Filter{}); return err },
		"Count":   func() error { _, err := q.Count(nilCtx, litequeue.Filter{}); return err },
		"Health":  func() error { _, err := q.Health(nilCtx); return err },
		"FailuresLastHour": func() error {
			_, err := q.FailuresLastHour(nilCtx)
			return err
		},
		"Stats":     func() error { _, err := q.Stats(nilCtx); return err },
		"Seen":      func() error { _, err := q.Seen(nilCtx, "k"); return err },
		"Mark":      func() error { return q.Mark(nilCtx, "k", time.Hour) },
		"MarkTx":    func() error { return q.MarkTx(nilCtx, tx, "k", time.Hour) },
		"NextDue":   func() error { _, _, err := q.NextDue(nilCtx); return err },
		"RunDue":    func() error { _, err := q.RunDue(nilCtx); return err },
		"Work":      func() error { return q.Work(nilCtx, litequeue.WorkerOptions{}) },
		"Enqueue":   func() error { _, err := q.Enqueue(nilCtx, "task", nil); return err },
		"EnqueueTx": func() error { _, err := q.EnqueueTx(nilCtx, tx, "task", nil); return err },
		"EnqueueMany": func() error {
			_, err := q.EnqueueMany(nilCtx, "task", []any{1, 2})
			return err
		},
		"Cancel":     func() error { return q.Cancel(nilCtx, job.ID) },
		"Replay":     func() error { return q.Replay(nilCtx, job.ID) },
		"ReplayDead": func() error { _, err := q.ReplayDead(nilCtx, litequeue.Filter{}); return err },
		"RunNow":     func() error { return q.RunNow(nilCtx, job.ID) },
		"Delete":     func() error { return q.Delete(nilCtx, job.ID) },
		"CompleteTx": func() error { return q.CompleteTx(nilCtx, tx, job) },
	}
	for name, call := range calls {
		err := call()
		if err == nil || !strings.Contains(err.Error(), "nil context") {
			t.Errorf("%s(nil ctx) = %v, want an error naming the nil context", name, err)
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Nothing was wedged or changed: the job is as it was, and runs.
	if got := get(t, q, job.ID); got.State != litequeue.Pending || got.Attempt != 0 {
		t.Fatalf("job after the nil-context calls: %s, attempt %d; want pending, attempt 0", got.State, got.Attempt)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue = %d runs, want 1", n)
	}
	if jobs, err := q.List(t.Context(), litequeue.Filter{}); err != nil || len(jobs) != 1 {
		t.Fatalf("List = %d jobs, %v; want 1 job", len(jobs), err)
	}
}

// closeAsync calls Close on a goroutine of its own and closes the
// returned channel when Close returns, once the test has read its error
// from *err.
func closeAsync(q *litequeue.Queue, err *error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		*err = q.Close()
		close(done)
	}()
	return done
}

// releaseWait is how long a shutdown waits, once the grace has run out
// and the running handlers' contexts are cancelled, for them to return
// before it abandons their runs: the grace, at most 5s.
const releaseWait = 5 * time.Second

// waitClosing waits until Close has begun: the Queue refuses new calls.
func waitClosing(tb testing.TB, q *litequeue.Queue) {
	tb.Helper()
	waitFor(tb, "Close to begin", func() bool {
		_, _, err := q.NextDue(tb.Context())
		return errors.Is(err, litequeue.ErrClosed)
	})
}

// TestQueue_CloseStopsRunDue closes the Queue while RunDue runs the first
// of three due jobs: RunDue claims no other, returns ErrClosed with its one
// run once the handler returns, and Close returns then.
func TestQueue_CloseStopsRunDue(t *testing.T) {
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	g := newGate()
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if job.ID == 1 {
			return g.handle(ctx, job)
		}
		return nil
	})
	for range 3 {
		enqueue(t, q, "k", nil)
	}
	done := runDueAsync(q)
	<-g.started
	var closeErr error
	closed := closeAsync(q, &closeErr)
	waitClosing(t, q)
	close(g.release)
	if r := <-done; r.n != 1 || !errors.Is(r.err, litequeue.ErrClosed) {
		t.Fatalf("RunDue = %d, %v; want 1 run, ErrClosed", r.n, r.err)
	}
	<-closed
	if closeErr != nil {
		t.Fatalf("Close: %v", closeErr)
	}
	after := openAt(t, path, litequeue.Options{})
	for id, want := range map[int64]litequeue.State{1: litequeue.Completed, 2: litequeue.Pending, 3: litequeue.Pending} {
		if got := get(t, after, id).State; got != want {
			t.Errorf("job %d: %s, want %s", id, got, want)
		}
	}
}

// TestQueue_CloseCancelsRunDue closes the Queue while RunDue runs a
// handler that waits for its context: after DefaultShutdownGrace on the
// mock clock the context is cancelled and the job, whose handler returned,
// is released without using a try. A handler that ignores the cancel is
// abandoned after a further 5s, and its job stays leased until its lease
// expires. Either way Close returns.
func TestQueue_CloseCancelsRunDue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		returns     bool // whether the handler returns once its context is cancelled
		want        litequeue.State
		wantAttempt int
	}{
		{"handler returns", true, litequeue.Pending, 0},
		{"handler ignores the cancel", false, litequeue.Running, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newTimerClock()
			q, path := openQueue(t, litequeue.Options{Clock: clk})
			started, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
			defer close(release)
			var cancelledAt time.Time // on the clock
			q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				close(started)
				<-ctx.Done()
				cancelledAt = clk.Now()
				close(cancelled)
				if !tc.returns {
					<-release
				}
				return ctx.Err()
			})
			job := enqueue(t, q, "k", nil)
			done := runDueAsync(q)
			<-started
			var closeErr error
			from := clk.mark()
			closed := closeAsync(q, &closeErr)
			waitClosing(t, q)
			runOut(t, clk, from, litequeue.DefaultShutdownGrace)
			waitClosed(t, "the grace to run out", cancelled)
			if got := cancelledAt.Sub(epoch); got < litequeue.DefaultShutdownGrace {
				t.Fatalf("the handler's context was cancelled %v after Close, before the grace of %v", got, litequeue.DefaultShutdownGrace)
			}
			if !tc.returns {
				runOut(t, clk, from, releaseWait) // the run is abandoned
			}
			waitClosed(t, "Close to return", closed)
			if closeErr != nil {
				t.Fatalf("Close: %v", closeErr)
			}
			if r := <-done; r.n != 1 || !errors.Is(r.err, litequeue.ErrClosed) {
				t.Fatalf("RunDue = %d, %v; want 1 run, ErrClosed", r.n, r.err)
			}
			after := openAt(t, path, litequeue.Options{Clock: clk})
			if got := get(t, after, job.ID); got.State != tc.want || got.Attempt != tc.wantAttempt {
				t.Fatalf("job: %s attempt %d, want %s attempt %d", got.State, got.Attempt, tc.want, tc.wantAttempt)
			}
			if h := history(t, after, job.ID); len(h) != 0 {
				t.Fatalf("history = %+v, want none", h)
			}
		})
	}
}

// TestQueue_CloseFromHandler calls Close from inside a handler, under
// RunDue and under Work: Close cannot wait for the handler that called it,
// so it abandons that run after the grace and the further wait, as a
// shutdown does, and returns; it does not deadlock.
func TestQueue_CloseFromHandler(t *testing.T) {
	t.Parallel()
	for _, under := range []string{"RunDue", "Work"} {
		t.Run(under, func(t *testing.T) {
			t.Parallel()
			clk := newTimerClock()
			q, _ := openQueue(t, litequeue.Options{Clock: clk})
			closed := make(chan struct{})
			var closeErr error
			q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				closeErr = q.Close()
				close(closed)
				return nil
			})
			enqueue(t, q, "k", nil)
			from := clk.mark()
			abandon := func() { // the grace and the release wait run out: Close abandons the run
				runOut(t, clk, from, litequeue.DefaultShutdownGrace)
				runOut(t, clk, from, releaseWait)
				waitClosed(t, "Close to return", closed)
			}
			if under == "RunDue" {
				done := runDueAsync(q)
				abandon()
				if r := <-done; r.n != 1 || !errors.Is(r.err, litequeue.ErrClosed) {
					t.Errorf("RunDue = %d, %v; want 1 run, ErrClosed", r.n, r.err)
				}
			} else {
				done := make(chan error, 1)
				go func() { done <- q.Work(t.Context(), litequeue.WorkerOptions{}) }()
				abandon()
				if err := <-done; err != nil {
					t.Errorf("Work = %v, want nil", err)
				}
			}
			if closeErr != nil {
				t.Fatalf("Close from a handler: %v", closeErr)
			}
		})
	}
}

func TestOpen_Refuses(t *testing.T) {
	t.Parallel()
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
		}, "has litequeue schema version 99, newer than this binary's 6"},
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := t.Context()
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
	t.Parallel()
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

// TestOpenReadOnly_Inspects inspects a file another Queue works on, and
// refuses to create or adopt one.
func TestOpenReadOnly_Inspects(t *testing.T) {
	fileOnly(t, "OpenReadOnly opens a file")
	t.Parallel()
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
	if _, err := ro.Enqueue(t.Context(), "k", nil); !errors.Is(err, litequeue.ErrReadOnly) {
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
	if err := ro.Work(t.Context(), litequeue.WorkerOptions{}); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("Work on a read-only queue: %v, want ErrReadOnly at once", err)
	}
	if _, err := ro.RunDue(t.Context()); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("RunDue on a read-only queue: %v, want ErrReadOnly", err)
	}
	enqueue(t, q, "k", "more") // the writer goes on meanwhile
	if jobs, err := ro.List(t.Context(), litequeue.Filter{}); err != nil || len(jobs) != 2 {
		t.Fatalf("read-only List: %d jobs, %v; want 2", len(jobs), err)
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

// TestOpenExisting_ExistingOnly writes to a litequeue file, and refuses,
// leaving them byte for byte as they were and with nothing beside them, the
// files that Open would create or adopt.
func TestOpenExisting_ExistingOnly(t *testing.T) {
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
