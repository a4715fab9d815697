package store_test

import (
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_DueTimes checks that the reads an idle worker makes at
// every look, and the rescue's look through the expired leases, use the
// partial indexes of running and pending jobs, not every row, and never
// sort.
func TestQueryPlans_DueTimes(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	storetest.ReadsIndex(t, db, "leases and pauses", "litequeue_jobs_lease", store.NextLeaseSQL)
	storetest.ReadsIndex(t, db, "a kind's next pending job", "litequeue_jobs_claim", store.NextPendingSQL, "k")
	storetest.ReadsIndex(t, db, "the kinds of pending jobs", "litequeue_jobs_claim", store.PendingKindsSQL)
	storetest.ReadsIndex(t, db, "expired leases", "litequeue_jobs_lease", store.ExpiredSQL, 0, 10)
}
