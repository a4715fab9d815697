//go:build !linux

package sqlite

import "testing"

// watches: there is no notifier here (see watch_other.go).
func watches(t *testing.T, _ *notifier) int {
	t.Helper()
	t.Fatal("no file notifications here")
	return 0
}
