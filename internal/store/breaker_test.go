package store_test

import (
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// TestFailed: Failed says of each outcome what FailedSQL says of a history
// row of it, on a real file.
func TestFailed(t *testing.T) {
	_, db := openFile(t, "NORMAL")
	for _, outcome := range []string{"completed", "failed", "panicked", "timed_out", "lease_expired",
		"discarded", "cancelled", "snoozed", "replayed", "run_now", "expired", ""} {
		var inSQL bool
		if err := db.Get(&inSQL, `SELECT `+store.FailedSQL+` FROM (SELECT ? AS outcome)`, outcome); err != nil {
			t.Fatal(err)
		}
		if got := store.Failed(outcome); got != inSQL {
			t.Errorf("Failed(%q) = %v, FailedSQL says %v", outcome, got, inSQL)
		}
	}
}
