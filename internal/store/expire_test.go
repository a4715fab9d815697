package store_test

import (
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_Expiry checks that the reads of pending jobs whose expiry
// has come use the expiry index, which holds only jobs with an expiry:
// with none due, each is one empty probe, at every claim (BeforeClaim) and
// sweep. The read of the jobs to expire reads the index in the order it
// needs and stops at its LIMIT, instead of sorting every match.
func TestQueryPlans_Expiry(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	storetest.ReadsIndex(t, db, "expiry", "litequeue_jobs_expiry", store.AnyExpirySQL, 0)
	storetest.ReadsIndex(t, db, "expiry before a claim", "litequeue_jobs_expiry", store.ClaimFirstSQL, 0)
	storetest.ReadsIndex(t, db, "jobs to expire", "litequeue_jobs_expiry", store.DueExpirySQL, 0, 10)
}
