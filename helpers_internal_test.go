package litequeue

import (
	"path/filepath"
	"testing"
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
