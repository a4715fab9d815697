package store_test

import (
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_RecentRuns checks that the reads of the last hour's
// runs, which have no index by finished_at (schema.sql, version 6), read
// the failed runs through litequeue_attempts_breaker, the kinds a probe
// each and a range per kind, and the completed runs of a breaker from the
// first ID of their window, by rowid: never every history row.
func TestQueryPlans_RecentRuns(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	storetest.ReadsIndex(t, db, "the kinds of failed runs", "litequeue_attempts_breaker", store.FailedKindsSQL)
	for name, query := range map[string]string{
		"retries":  store.RetriesSQL,
		"deaths":   store.DeathsSQL,
		"failures": store.FailuresSQL,
	} {
		p := storetest.PlanOf(t, db, query, "k", 0)
		if !strings.Contains(p, "SEARCH litequeue_attempts USING INDEX litequeue_attempts_breaker (kind=? AND finished_at>?)") {
			t.Errorf("%s: the read is not a range of litequeue_attempts_breaker:\n%s\nplan: %s", name, query, p)
		}
	}
	p := storetest.PlanOf(t, db, store.CompletedSinceSQL, 0, 0, 0, "k", 1)
	if strings.Contains(p, "SCAN litequeue_attempts") || !strings.Contains(p, "SEARCH litequeue_attempts USING INTEGER PRIMARY KEY (rowid>?)") {
		t.Errorf("completed runs: the read is not a range of rowids:\n%s\nplan: %s", store.CompletedSinceSQL, p)
	}
}
