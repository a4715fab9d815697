package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/sqlite"
)

// openFile opens the file engine on a new file in the test's directory,
// with the repository's schema and the given synchronous level ("":
// full), and a Writer on it; both are closed when the test ends. It also
// returns a pool on the file for the test's own reads.
func openFile(tb testing.TB, synchronous string) (*store.Writer[struct{}], *sqlx.DB) {
	tb.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		tb.Fatal(err)
	}
	if synchronous == "" {
		synchronous = "full"
	}
	eng, err := sqlite.Open(filepath.Join(tb.TempDir(), "q.db"),
		sqlite.Config{Synchronous: synchronous, Schema: string(schema), ReadPool: 4})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	info := eng.Info()
	conn, err := store.NewConn(context.Background(), info.Writes, info.Dialect)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return &store.Writer[struct{}]{Conn: conn, Engine: eng, Wake: func() {}}, info.App
}
