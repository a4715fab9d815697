package sqlite

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// waitFor polls cond until it holds, failing the test after a real-time
// deadline of 10s. For goroutines the test cannot step.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// openTemp opens an Engine with c on a new file in the test's directory,
// with the repository's schema, and closes it when the test ends.
func openTemp(tb testing.TB, c Config) *Engine {
	tb.Helper()
	if c.Schema == "" {
		c.Schema = testSchema(tb)
	}
	if c.Synchronous == "" {
		c.Synchronous = "full"
	}
	if c.ReadPool == 0 {
		c.ReadPool = 4
	}
	e, err := Open(filepath.Join(tb.TempDir(), "q.db"), c)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// testSchema is the repository's schema.sql, which the root package embeds
// and hands to Open.
func testSchema(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "schema.sql"))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
