package postgres_test

import (
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store/postgres"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_ClaimScheduled checks that the claim reads
// litequeue_jobs_pending alone, with a work bounded by the kinds, their
// priorities and the limit, not by the jobs scheduled (storetest.ServerScheduled),
// and takes the three due jobs. Before version 7, a claim walked every
// pending job of its kinds (312 blocks at 30,000 jobs against 40 at
// 3,000).
func TestQueryPlans_ClaimScheduled(t *testing.T) {
	t.Parallel()
	storetest.ServerScheduled(t, func(t *testing.T) *sqlx.DB { return openEngine(t).Info().Reads }, func(t *testing.T, db *sqlx.DB) int {
		var n int
		args := []any{[]string{"k0", "k1", "k2"}, 1000, 1000, nil, nil, []string{}, 10, 10}
		if err := db.GetContext(t.Context(), &n, `SELECT COUNT(*) FROM (`+postgres.Dialect.SQL(postgres.ClaimSQL)+`) AS c`, args...); err != nil || n != 3 {
			t.Errorf("claim: %d jobs, %v; want 3", n, err)
		}
		return storetest.ServerBlocks(t, db, "claim", "litequeue_jobs", "litequeue_jobs_pending", postgres.ClaimSQL, args...)
	})
}
