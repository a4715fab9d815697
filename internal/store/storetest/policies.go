package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// The cases of the recorded policies (store/policies.go).

// testRecordPolicies: RecordPolicies adds a row per new scope and
// rewrites a row only where its value changed, with the new time and
// author; a row of the same value keeps its time and author, and a scope
// that a record leaves out keeps its row; it counts the rows it wrote.
// A policy and a kind of one name are two scopes. Policies reads them by
// scope and name, none on a new database.
func testRecordPolicies(t *testing.T, f *Fixture) {
	if rows := policies(t, f); len(rows) != 0 {
		t.Fatalf("Policies of a new database = %v, want none", rows)
	}
	first := []store.PolicyRow{
		{Scope: "default", Value: `{"max_tries":8}`, RecordedAt: 1000, Host: "a", PID: 1},
		{Scope: "policy", Name: "payments", Value: `{"max_tries":12}`, RecordedAt: 1000, Host: "a", PID: 1},
		{Scope: "kind", Name: "payments", Value: `{"timeout_ms":5000}`, RecordedAt: 1000, Host: "a", PID: 1},
	}
	if n := recordPolicies(t, f, first); n != 3 {
		t.Errorf("the first record wrote %d rows, want 3", n)
	}
	// Another process: the same default, another named policy, a new
	// kind, and nothing of the kind payments.
	second := []store.PolicyRow{
		{Scope: "default", Value: `{"max_tries":8}`, RecordedAt: 5000, Host: "b", PID: 2},
		{Scope: "policy", Name: "payments", Value: `{"max_tries":20}`, RecordedAt: 5000, Host: "b", PID: 2},
		{Scope: "kind", Name: "resize", Value: `{"timeout_ms":0}`, RecordedAt: 5000, Host: "b", PID: 2},
	}
	if n := recordPolicies(t, f, second); n != 2 {
		t.Errorf("the second record wrote %d rows, want 2 (the default is unchanged)", n)
	}
	if n := recordPolicies(t, f, second); n != 0 {
		t.Errorf("the same record again wrote %d rows, want none", n)
	}
	want := []store.PolicyRow{first[0], first[2], second[2], second[1]}
	if diff := cmp.Diff(want, policies(t, f)); diff != "" {
		t.Errorf("Policies (-want +got):\n%s", diff)
	}
}

// recordPolicies records rows in a write of the fixture, and returns how
// many it wrote.
func recordPolicies(t *testing.T, f *Fixture, rows []store.PolicyRow) int {
	t.Helper()
	return written(t, f, func(ctx context.Context, tx store.Execer) (int, error) {
		return store.RecordPolicies(ctx, tx, rows)
	})
}

// policies reads the recorded policies on the fixture's read pool.
func policies(t *testing.T, f *Fixture) []store.PolicyRow {
	t.Helper()
	rows, err := store.Policies(t.Context(), f.Reads)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
