//go:build unix

package litequeue_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestOpen_AutoVacuum: a file Open creates allows incremental vacuum; a file
// that already had pages (the app's own tables) keeps its setting, and the
// janitor leaves it as it is.
func TestOpen_AutoVacuum(t *testing.T) {
	fileOnly(t, "the file's pages")
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var mode int
	if err := q.DB().Get(&mode, `PRAGMA auto_vacuum`); err != nil || mode != 2 {
		t.Fatalf("auto_vacuum of a new file = %d (%v), want 2 (incremental)", mode, err)
	}
	path := filepath.Join(t.TempDir(), "app.db")
	sqliteFile(t, path, `CREATE TABLE notes (body TEXT)`)
	clk := newMock()
	app := openAt(t, path, litequeue.Options{Clock: clk})
	if err := app.DB().Get(&mode, `PRAGMA auto_vacuum`); err != nil || mode != 0 {
		t.Fatalf("auto_vacuum of an adopted file = %d (%v), want 0 (none)", mode, err)
	}
	app.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	for range 300 {
		enqueue(t, app, "k", strings.Repeat("x", 4000))
	}
	runDue(t, app)
	clk.Add(litequeue.DefaultKeepFinished)
	runDue(t, app)
	if s := sizesOf(t, app, path); s.Free < 256 {
		t.Fatalf("%v: want the purged jobs' pages free, kept in the file", s)
	}
}
