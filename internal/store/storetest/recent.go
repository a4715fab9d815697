package storetest

import (
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// testCompletedWindow: CompletedSince counts a kind's completed runs that
// finished after a moment, up to a limit, reading the history from the
// first ID of its window: exactly, where rows finished out of their ID
// order by less than the window's margin (several processes' clocks,
// transactions that commit out of order), and zero of an empty history.
func testCompletedWindow(t *testing.T, f *Fixture) {
	ctx := t.Context()
	if n, err := store.CompletedSince(ctx, f.Reads, "k", 0, 10); err != nil || n != 0 {
		t.Fatalf("CompletedSince of an empty history: %d, %v; want 0", n, err)
	}
	id := putJob(t, f, "q", "k", nil)
	run := func(kind string, finished int64, outcome string) *store.HistoryRow {
		return &store.HistoryRow{
			AttemptRow: store.AttemptRow{Attempt: 1, FinishedAt: finished, Outcome: outcome},
			JobID:      id, Kind: kind, Next: "completed",
		}
	}
	var rows []*store.HistoryRow
	for i := range 2000 { // an hour of old runs, before the window
		rows = append(rows, run("k", int64(i)*1000, "completed"))
	}
	const since = 3_000_000
	rows = append(rows,
		run("k", since+60_000, "completed"), // ahead of the next rows by less than the margin
		run("k", since-1_000, "completed"),  // inserted after, finished before the moment
		run("k", since+1, "completed"),
		run("k", since+2_000, "failed"),
		run("other", since+3_000, "completed"),
		run("k", since, "completed"), // at the moment: not after it
		run("k", since+30_000, "completed"),
	)
	if err := f.Write(ctx, func(tx store.Execer) error { return store.AddHistory(ctx, tx, rows) }); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		since       int64
		limit, want int
	}{
		{since, 10, 3},
		{since, 2, 2},
		{since - 1_500, 10, 5},
		{1_998_500, 10, 6}, // the last old run, and every completed run of k after it
		{since + 60_000, 10, 0},
	} {
		if n, err := store.CompletedSince(ctx, f.Reads, "k", tc.since, int64(tc.limit)); err != nil || n != tc.want {
			t.Errorf("CompletedSince(%d, limit %d) = %d, %v; want %d", tc.since, tc.limit, n, err, tc.want)
		}
	}
}
