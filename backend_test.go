package litequeue_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

// The suite runs on the file, and, with LITEQUEUE_TEST_BACKEND=postgres,
// on the PostgreSQL server at LITEQUEUE_TEST_POSTGRES: every test that
// opens its queues with openQueue or openAt then runs on the server, each
// "file" a schema of its own, so that two Queues opened on one path share
// their jobs as on the file. Tests of the file itself call fileOnly.
var onPostgres = os.Getenv("LITEQUEUE_TEST_BACKEND") == "postgres"

// fileOnly skips a test of what only the file has when the suite runs on
// PostgreSQL.
func fileOnly(tb testing.TB, why string) {
	tb.Helper()
	if onPostgres {
		tb.Skipf("file only: %s", why)
	}
}

var pg struct {
	once    sync.Once
	db      *sql.DB
	err     error
	schemas sync.Map // path → DSN
	n       atomic.Int64
}

// tb is what openBackend needs of a test: a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}

// openBackend opens the Queue for path on the suite's backend.
func openBackend(tb tb, path string, opts litequeue.Options) (*litequeue.Queue, error) {
	if !onPostgres {
		return litequeue.Open(path, opts)
	}
	return postgres.Open(context.Background(), schemaFor(tb, path), opts)
}

// schemaFor returns the DSN of the schema that stands for the file at
// path, creating it on first use and dropping it at the end of the test.
func schemaFor(tb tb, path string) string {
	tb.Helper()
	if dsn, ok := pg.schemas.Load(path); ok {
		return dsn.(string)
	}
	base := os.Getenv("LITEQUEUE_TEST_POSTGRES")
	if base == "" {
		tb.Fatal("LITEQUEUE_TEST_BACKEND=postgres needs LITEQUEUE_TEST_POSTGRES, the URL of a server to test on")
	}
	pg.once.Do(func() { pg.db, pg.err = sql.Open("pgx", base) })
	if pg.err != nil {
		tb.Fatal(pg.err)
	}
	name := fmt.Sprintf("lq_%d_%d", os.Getpid(), pg.n.Add(1))
	if _, err := pg.db.Exec(`CREATE SCHEMA ` + name); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		pg.schemas.Delete(path)
		if _, err := pg.db.Exec(`DROP SCHEMA ` + name + ` CASCADE`); err != nil {
			tb.Errorf("drop schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	v := u.Query()
	v.Set("search_path", name)
	u.RawQuery = v.Encode()
	pg.schemas.Store(path, u.String())
	return u.String()
}
