package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// The cases of the workers' rows (store/workers.go).

// testRecordWorkers: RecordWorker adds a loop's row, and a later record
// of the same loop replaces its kinds, running and last sighting only,
// also with an earlier time (its clock went back); Workers reads them in
// the order they started, with their lists of names as written (none as
// none); DeleteWorker deletes one row, and one that is gone already
// without error.
func testRecordWorkers(t *testing.T, f *Fixture) {
	if rows := workers(t, f); len(rows) != 0 {
		t.Fatalf("Workers of a new database = %v, want none", rows)
	}
	a := store.WorkerRow{ID: "a1", Name: "web-1:41", Host: "web-1", PID: 41, Queues: store.Names{"emails", "reports"},
		Kinds: store.Names{"email.send"}, Concurrency: 10, Started: 1000, LastSeen: 1000}
	b := store.WorkerRow{ID: "b2", Name: "edge", Host: "pi-7", PID: 7, Concurrency: 1, Started: 500, LastSeen: 500}
	record(t, f, a, b)
	later := a
	later.Name, later.Host, later.PID, later.Queues, later.Concurrency, later.Started = "changed", "changed", 1, nil, 99, 99
	later.Kinds, later.Running, later.LastSeen = store.Names{"email.send", "report.build"}, 7, 61_000
	b.Running, b.LastSeen = 1, 400 // the clock went back
	record(t, f, later, b)
	a.Kinds, a.Running, a.LastSeen = later.Kinds, later.Running, later.LastSeen
	if diff := cmp.Diff([]store.WorkerRow{b, a}, workers(t, f)); diff != "" {
		t.Errorf("Workers (-want +got):\n%s", diff)
	}
	for range 2 {
		written(t, f, func(ctx context.Context, tx store.Execer) (struct{}, error) {
			return struct{}{}, store.DeleteWorker(ctx, tx, "b2")
		})
	}
	if diff := cmp.Diff([]store.WorkerRow{a}, workers(t, f)); diff != "" {
		t.Errorf("Workers after b2's delete (-want +got):\n%s", diff)
	}
}

// testSilentWorkers: SilentWorkers finds the workers last seen before the
// cutoff, none at it; DeleteSilentWorkers deletes those of them still
// silent, and keeps one that beat since it was found.
func testSilentWorkers(t *testing.T, f *Fixture) {
	old := store.WorkerRow{ID: "old", Name: "w", Host: "h", PID: 1, Concurrency: 1, Started: 100, LastSeen: 100}
	beats := store.WorkerRow{ID: "beats", Name: "w", Host: "h", PID: 2, Concurrency: 1, Started: 200, LastSeen: 200}
	live := store.WorkerRow{ID: "live", Name: "w", Host: "h", PID: 3, Concurrency: 1, Started: 300, LastSeen: 5000}
	record(t, f, old, beats, live)
	ids, err := store.SilentWorkers(t.Context(), f.Reads, 5000)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"beats", "old"}, slices.Sorted(slices.Values(ids))); diff != "" {
		t.Fatalf("SilentWorkers before 5000 (-want +got):\n%s", diff)
	}
	beats.LastSeen = 6000
	record(t, f, beats)
	written(t, f, func(ctx context.Context, tx store.Execer) (struct{}, error) {
		return struct{}{}, store.DeleteSilentWorkers(ctx, tx, ids, 5000)
	})
	if diff := cmp.Diff([]store.WorkerRow{beats, live}, workers(t, f)); diff != "" {
		t.Errorf("Workers after the delete of the silent ones (-want +got):\n%s", diff)
	}
}

// record writes the rows, each in a transaction of its own.
func record(t *testing.T, f *Fixture, rows ...store.WorkerRow) {
	t.Helper()
	for _, w := range rows {
		written(t, f, func(ctx context.Context, tx store.Execer) (struct{}, error) {
			return struct{}{}, store.RecordWorker(ctx, tx, &w)
		})
	}
}

// workers reads the workers' rows on the fixture's read pool.
func workers(t *testing.T, f *Fixture) []store.WorkerRow {
	t.Helper()
	rows, err := store.Workers(t.Context(), f.Reads)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
