package store

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite"

	"github.com/google/go-cmp/cmp"
)

// TestDialect_SQL turns litequeue's SQL into PostgreSQL's; SQLite's (the
// nil dialect) runs it as written.
func TestDialect_SQL(t *testing.T) {
	t.Parallel()
	const query = `SELECT id FROM litequeue_jobs INDEXED BY litequeue_jobs_claim
	WHERE id = ? AND last_error LIKE ? ESCAPE '\' /*FOR UPDATE SKIP LOCKED*/
	UNION SELECT id FROM litequeue_jobs NOT INDEXED WHERE id = ?`
	if got := (*Dialect)(nil).SQL(query); got != query {
		t.Errorf("SQLite's dialect changed the query:\n%s", got)
	}
	want := `SELECT id FROM litequeue_jobs
	WHERE id = $1 AND last_error ILIKE $2 ESCAPE '\' FOR UPDATE SKIP LOCKED
	UNION SELECT id FROM litequeue_jobs WHERE id = $3`
	if got := new(Dialect).SQL(query); got != want {
		t.Errorf("PostgreSQL's dialect:\n%s\nwant\n%s", got, want)
	}
}

// TestDialect_Args replaces what PostgreSQL's text cannot hold, in a copy
// of the arguments: the caller's slice stays as it was.
func TestDialect_Args(t *testing.T) {
	t.Parallel()
	args := []any{"ok", "nul\x00", "bad\xff", sql.NullString{String: "k\x00", Valid: true}, 7}
	orig := append([]any(nil), args...)
	got := new(Dialect).Args(args)
	want := []any{"ok", "nul\uFFFD", "bad\uFFFD", sql.NullString{String: "k\uFFFD", Valid: true}, 7}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig, args); diff != "" {
		t.Errorf("the caller's slice changed (-before +after):\n%s", diff)
	}
	clean := []any{"ok", 1}
	if got := new(Dialect).Args(clean); &got[0] != &clean[0] {
		t.Error("clean arguments were copied")
	}
}

// TestDBPool_ReadsWhileTheCacheTurnsOver reads, from several goroutines at
// once, one statement again and again and more distinct ones than the
// pool's statement cache holds: no read fails because another's turned
// the cache over and closed a statement it had just been given.
func TestPool_ReadsWhileTheCacheTurnsOver(t *testing.T) {
	t.Parallel()
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	p := NewPool(db, nil, nil)
	t.Cleanup(func() { p.CloseStmts() })
	const readers, each = 8, 20 * maxStmts
	errs := make(chan error, readers)
	for r := range readers {
		go func() {
			for i := range each {
				query := `SELECT ?` // the same
				if i%2 == 1 {
					query = fmt.Sprintf(`SELECT ? /* %d %d */`, r, i) // another
				}
				var n int
				if err := p.GetContext(t.Context(), &n, query, i); err != nil || n != i {
					errs <- fmt.Errorf("reader %d, read %d: %d, %v", r, i, n, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range readers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
