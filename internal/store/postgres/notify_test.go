package postgres_test

import (
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// TestEngine_NotifyPerStatement counts, with the server's statistics of
// the transaction's function calls, the calls of the wake-up trigger's
// function: one for an insert of 1,000 pending jobs, one more for an
// UPDATE that leaves the 1,000 pending, and one more for an UPDATE that
// leaves none pending, which calls it and notifies nothing. A row
// trigger called it 2,000 times.
func TestEngine_NotifyPerStatement(t *testing.T) {
	t.Parallel()
	eng := openEngine(t)
	ctx := t.Context()
	tx, err := eng.Info().App.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET LOCAL track_functions = 'pl'`); err != nil {
		t.Skipf("count the trigger's calls: %v (a superuser sets track_functions)", err)
	}
	calls := func() int {
		t.Helper()
		var n int
		if err := tx.GetContext(ctx, &n, `SELECT coalesce(pg_stat_get_xact_function_calls('litequeue_notify'::regproc), 0)`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	in := store.WrapTx(tx, eng.Info().Dialect)
	if _, err := eng.InsertJobs(ctx, in, &store.NewJobs{Queue: "q", Kind: "k", Payloads: make([][]byte, 1000), MaxTries: 3}); err != nil {
		t.Fatal(err)
	}
	want := []int{1}
	got := []int{calls()}
	for _, set := range []string{`run_at = 5`, `state = 'running'`} {
		if _, err := tx.ExecContext(ctx, `UPDATE litequeue_jobs SET `+set); err != nil {
			t.Fatal(err)
		}
		want, got = append(want, len(want)+1), append(got, calls())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("calls of litequeue_notify after each statement: %v, want %v", got, want)
		}
	}
}
