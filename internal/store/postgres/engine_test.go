package postgres_test

import (
	"database/sql"
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
		return storetest.NewFixture(t, eng)
	})
}
