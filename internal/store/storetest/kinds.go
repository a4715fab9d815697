package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// The cases of the handled kinds (store/kinds.go).

// testRecordKinds: RecordKinds adds a row per new kind, first and last
// seen at its time; a later record of a known kind moves its last
// sighting only, and one of an earlier time (a clock set back) changes
// nothing; HandledKinds reads them by kind, none on a new database.
func testRecordKinds(t *testing.T, f *Fixture) {
	if rows := handledKinds(t, f); len(rows) != 0 {
		t.Fatalf("HandledKinds of a new database = %v, want none", rows)
	}
	for _, r := range []struct {
		kinds []string
		now   int64
	}{
		{[]string{"email.welcome", "resize"}, 1000},
		{[]string{"resize", "audit"}, 5000},
		{[]string{"email.welcome", "audit"}, 3000}, // the clock went back
		{nil, 9000},
	} {
		written(t, f, func(ctx context.Context, tx store.Execer) (struct{}, error) {
			return struct{}{}, store.RecordKinds(ctx, tx, r.kinds, r.now)
		})
	}
	want := []store.KindRow{
		{Kind: "audit", FirstSeen: 5000, LastSeen: 5000},
		{Kind: "email.welcome", FirstSeen: 1000, LastSeen: 3000},
		{Kind: "resize", FirstSeen: 1000, LastSeen: 5000},
	}
	if diff := cmp.Diff(want, handledKinds(t, f)); diff != "" {
		t.Errorf("HandledKinds (-want +got):\n%s", diff)
	}
}

// handledKinds reads the recorded kinds on the fixture's read pool.
func handledKinds(t *testing.T, f *Fixture) []store.KindRow {
	t.Helper()
	rows, err := store.HandledKinds(t.Context(), f.Reads)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
