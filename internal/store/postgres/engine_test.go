package postgres_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/litequeue/litequeue/internal/backend"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/internal/store/postgres"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestEngine_Suite runs the suite every engine passes, each case on a
// database of its own on the test server.
func TestEngine_Suite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) *storetest.Fixture {
		return storetest.NewFixture(t, openEngine(t))
	})
}

// openEngine opens an engine on a database of its own on the test
// server, and closes it when the test ends.
func openEngine(t *testing.T) *postgres.Engine {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng, err := postgres.Open(t.Context(), backend.Postgres{DB: db}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestEngine_Backup: a server has no file to copy, and Backup says so,
// with what to use instead.
func TestEngine_Backup(t *testing.T) {
	t.Parallel()
	err := openEngine(t).Backup(t.Context(), filepath.Join(t.TempDir(), "copy.db"), true)
	want := "a Queue on a server has no file to copy: back the server up with its own tools (pg_dump)"
	if err == nil || err.Error() != want {
		t.Errorf("Backup: %v, want %q", err, want)
	}
}
