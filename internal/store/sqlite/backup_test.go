package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// openReadOnly opens the file at path read-only, with one connection for
// litequeue's reads, and closes it when the test ends.
func openReadOnly(tb testing.TB, path string) *Engine {
	tb.Helper()
	e, err := Open(path, Config{Mode: ReadOnly, Synchronous: "full", ReadPool: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// TestEngine_Backup backs up through a writing Engine and a read-only
// one: each copy, of mode 0600, is sound and a backup, holds the job,
// and nothing else is left beside it; the read-only Engine's connection
// refuses writes again afterwards.
func TestEngine_Backup(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := openTemp(t, Config{})
	f := storetest.NewFixture(t, e)
	err := f.Write(ctx, func(tx store.Execer) error {
		_, err := e.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q", Kind: "k", Payloads: [][]byte{nil}, MaxTries: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ro := openReadOnly(t, e.path)
	for name, eng := range map[string]*Engine{"writer": e, "read-only": ro} {
		dir := t.TempDir()
		to := filepath.Join(dir, "copy.db")
		if err := eng.Backup(ctx, to, false); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi, err := os.Stat(to); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: the copy: %v, %v; want mode 0600", name, fi.Mode(), err)
		}
		c := openReadOnly(t, to)
		h, err := c.Health(ctx)
		if err != nil || !h.Backup || len(h.ReadProblems)+len(h.FileProblems) != 0 {
			t.Errorf("%s: the copy's health: %+v, %v; want a sound backup", name, h, err)
		}
		jobs, err := store.JobsByState(ctx, c.Info().Reads)
		if err != nil || len(jobs) != 1 || jobs[0] != (store.StateTotal{State: "pending", N: 1}) {
			t.Errorf("%s: the copy's jobs: %v, %v; want one pending", name, jobs, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); !slices.Equal(left, []string{to}) {
			t.Errorf("%s: the copy's directory holds %q", name, left)
		}
	}
	var queryOnly bool
	if err := ro.Info().Reads.Get(&queryOnly, queryOnlySQL); err != nil || !queryOnly {
		t.Errorf("after Backup, the read-only connection's query_only: %v, %v; want on", queryOnly, err)
	}
}

// TestEngine_BackupRefuses: Backup refuses the engine's own files by
// name and by another name, an existing file unless overwrite, a
// directory and an empty path, leaving what was there as it was; its
// errors do not name the path, which the caller names.
func TestEngine_BackupRefuses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := openTemp(t, Config{})
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.db")
	if err := os.WriteFile(existing, []byte("yesterday's"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path      string
		overwrite bool
		want      string
	}{
		{e.path, true, "it is the queue's own file"},
		{e.path + "-wal", true, "it is the queue's -wal file"},
		{e.path + "-lock", false, "it is the queue's -lock file"},
		{filepath.Join(filepath.Dir(e.path), ".", filepath.Base(e.path)), true, "it is the queue's own file"},
		{existing, false, "file already exists"},
		{sub, true, "it is a directory, not a file a backup may replace"},
		{filepath.Join(dir, "no", "such.db"), false, "open: "},
		{"", true, "the path is empty"},
	} {
		err := e.Backup(ctx, tt.path, tt.overwrite)
		if err == nil || !strings.Contains(err.Error(), tt.want) || tt.path != "" && strings.Contains(err.Error(), tt.path) {
			t.Errorf("Backup to %q, overwrite %v: %v; want %q, without the path", tt.path, tt.overwrite, err, tt.want)
		}
	}
	if err := e.Backup(ctx, existing, false); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Backup over an existing file: %v, want fs.ErrExist", err)
	}
	if data, err := os.ReadFile(existing); err != nil || string(data) != "yesterday's" {
		t.Errorf("the refused file now holds %q (%v)", data, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); !slices.Equal(left, []string{existing, sub}) {
		t.Errorf("after the refusals the directory holds %q", left)
	}
}
