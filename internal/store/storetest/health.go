package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of a database's health: the engine's own report, and
// the rows of litequeue's tables that every engine counts alike.

// testHealth: a new database is sound: the engine's report has a schema
// version, no problem and no warning, and explains nothing.
func testHealth(t *testing.T, f *Fixture) {
	h, err := f.Engine.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.SchemaVersion < 1 {
		t.Errorf("schema version %d, want one", h.SchemaVersion)
	}
	if h.ReadProblems == nil || h.Warnings == nil {
		t.Errorf("problems %#v, warnings %#v: want empty, not nil", h.ReadProblems, h.Warnings)
	}
	if len(h.ReadProblems)+len(h.FileProblems)+len(h.Warnings) != 0 || h.Explain != "" {
		t.Errorf("problems %q and %q, warnings %q, explanation %q; want none", h.ReadProblems, h.FileProblems, h.Warnings, h.Explain)
	}
}

// rowCounts reads what JobsByState, HistoryRows and KeyRows count, the
// jobs as a map of state to count.
func rowCounts(t *testing.T, f *Fixture) (jobs map[string]int, history, keys int) {
	t.Helper()
	ctx := t.Context()
	totals, err := store.JobsByState(ctx, f.Reads)
	if err != nil {
		t.Fatal(err)
	}
	jobs = map[string]int{}
	for _, s := range totals {
		if _, twice := jobs[s.State]; twice {
			t.Errorf("JobsByState %v: %s twice", totals, s.State)
		}
		jobs[s.State] = s.N
	}
	if history, err = store.HistoryRows(ctx, f.Reads); err != nil {
		t.Fatal(err)
	}
	if keys, err = store.KeyRows(ctx, f.Reads); err != nil {
		t.Fatal(err)
	}
	return jobs, history, keys
}

// testRowCounts: JobsByState counts the jobs of every queue by state,
// with no row for a state no job is in; HistoryRows counts the history of
// every job, and KeyRows every key, expired or not.
func testRowCounts(t *testing.T, f *Fixture) {
	ctx := t.Context()
	if jobs, history, keys := rowCounts(t, f); len(jobs) != 0 || history != 0 || keys != 0 {
		t.Errorf("on a new database: jobs %v, %d history rows, %d keys; want none", jobs, history, keys)
	}
	putJob(t, f, "q1", "k", nil)
	putJob(t, f, "q2", "k", nil)
	dead := putJob(t, f, "q1", "k", finished("dead", 10, "boom"))
	base := time.UnixMilli(1_700_000_000_000)
	err := f.Write(ctx, func(tx store.Execer) error {
		row := &store.HistoryRow{AttemptRow: store.AttemptRow{Attempt: 1, Outcome: "failed"}, JobID: dead, Kind: "k", Next: "dead"}
		if err := store.AddHistoryRow(ctx, tx, row); err != nil {
			return err
		}
		if err := store.MarkKey(ctx, tx, "expired", base.Add(-time.Hour)); err != nil {
			return err
		}
		return store.MarkKey(ctx, tx, "live", base.Add(time.Hour))
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, history, keys := rowCounts(t, f)
	if diff := cmp.Diff(map[string]int{"pending": 2, "dead": 1}, jobs); diff != "" {
		t.Errorf("JobsByState (-want +got):\n%s", diff)
	}
	if history != 1 || keys != 2 {
		t.Errorf("%d history rows, %d keys; want 1 and 2", history, keys)
	}
}
