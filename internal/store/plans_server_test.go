package store_test

import (
	"database/sql"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// openServer opens an engine on a database of its own on the test server
// and returns its read pool; both are closed when the test ends.
func openServer(t *testing.T) *sqlx.DB {
	t.Helper()
	return storetest.OpenServer(t, pgtest.DSN(t)).Info().Reads
}

// TestQueryPlans_DueTimesScheduled checks on the server that a kind's
// earliest RunAt and the kinds of the pending jobs read
// litequeue_jobs_pending alone, with a work bounded by the kinds and their
// priorities, not by the jobs scheduled (storetest.ServerScheduled), and
// read what they should.
func TestQueryPlans_DueTimesScheduled(t *testing.T) {
	t.Parallel()
	for what, query := range map[string]string{"next pending": store.NextPendingSQL, "pending kinds": store.PendingKindsSQL} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			storetest.ServerScheduled(t, openServer, func(t *testing.T, db *sqlx.DB) int {
				if query == store.PendingKindsSQL {
					if got, err := store.DueKinds(t.Context(), store.NewPool(db, &store.Dialect{}, nil), 1000); err != nil || !slices.Equal(got, []string{"k0", "k1"}) {
						t.Errorf("DueKinds at 1000: %v, %v; want [k0 k1]", got, err)
					}
					return storetest.ServerBlocks(t, db, what, "litequeue_jobs", "litequeue_jobs_pending", query)
				}
				if got, err := store.NextPending(t.Context(), store.NewPool(db, &store.Dialect{}, nil), "k2", nil, nil); err != nil || got != (sql.NullInt64{Int64: 100_002, Valid: true}) {
					t.Errorf("NextPending of k2: %v, %v; want 100002", got, err)
				}
				return storetest.ServerBlocks(t, db, what, "litequeue_jobs", "litequeue_jobs_pending", query, "k2")
			})
		})
	}
}

// TestQueryPlans_RecentRunsScheduled checks on the server, without an
// index of the history by finished_at, that the last hour's failures are
// read through litequeue_attempts_failed, a probe per kind and a range
// of each, and a breaker's completed runs
// through the history's primary key (a search for the window's first
// ID, then its range), both with a work that does not grow with the old
// runs before the window: 3,000 of them, then 30,000.
func TestQueryPlans_RecentRunsScheduled(t *testing.T) {
	t.Parallel()
	const old = `INSERT INTO litequeue_attempts (job_id, attempt, started_at, finished_at, outcome, kind, next_state)
		SELECT 1, 1, i, i, CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'completed' END, 'k' || (i % 3),
		CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'completed' END FROM generate_series($1::bigint, $2::bigint) AS i`
	const recent = `INSERT INTO litequeue_attempts (job_id, attempt, started_at, finished_at, outcome, kind, next_state)
		VALUES (1, 1, 0, 1000000, 'failed', 'k1', 'dead'), (1, 1, 0, 1000001, 'completed', 'k1', 'completed')`
	for what, read := range map[string]struct {
		query, index string
		args         []any
	}{
		"failed kinds": {store.FailedKindsSQL, "litequeue_attempts_failed", nil},
		"retries":      {store.RetriesSQL, "litequeue_attempts_failed", []any{"k1", 999_000}},
		"failures":     {store.FailuresSQL, "litequeue_attempts_failed", []any{"k1", 999_000}},
		"completed":    {store.CompletedSinceSQL, "litequeue_attempts_pkey", []any{999_000 - store.WindowMargin, 999_000 - store.WindowMargin, 999_000, "k1", 10}},
	} {
		t.Run(what, func(t *testing.T) {
			t.Parallel()
			db := openServer(t)
			var blocks []int
			for _, span := range [][2]int{{1, 3_000}, {3_001, 30_000}} {
				if _, err := db.ExecContext(t.Context(), old, span[0], span[1]); err != nil {
					t.Fatal(err)
				}
				if span[0] == 1 {
					if _, err := db.ExecContext(t.Context(), recent); err != nil {
						t.Fatal(err)
					}
				}
				blocks = append(blocks, storetest.ServerBlocks(t, db, what, "litequeue_attempts", read.index, read.query, read.args...))
			}
			t.Logf("%d blocks at 3,000 old runs, %d at 30,000", blocks[0], blocks[1])
			if blocks[1] >= blocks[0]*3/2 {
				t.Errorf("%d blocks at 3,000 old runs, %d at 30,000: the work grows with them", blocks[0], blocks[1])
			}
		})
	}
}
