package litequeue

import (
	"path/filepath"
	"testing"
	"time"
)

// openTemp opens a Queue with opts on a new file in the test's directory,
// and closes it when the test ends.
func openTemp(t testing.TB, opts Options) *Queue {
	t.Helper()
	q, err := Open(filepath.Join(t.TempDir(), "q.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// waitWithin polls cond until it holds, failing the test after a
// real-time deadline d. For goroutines the test cannot step.
func waitWithin(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
