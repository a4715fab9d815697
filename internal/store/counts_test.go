package store_test

import (
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_KeptCounts checks that the figures read from the kept
// counts read no job but through the claim index, by kind and priority:
// the scheduled jobs of a kind (run_at>?), the oldest due one of a queue
// and kind (run_at<?), and one probe per kind and priority for the kinds
// with due jobs.
// A plan that scanned litequeue_jobs would read every job at each
// refresh of the dashboard.
func TestQueryPlans_KeptCounts(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	for query, searches := range map[string][]string{
		store.KeptPendingSQL:  {"INDEX litequeue_jobs_claim (kind=? AND priority=? AND run_at>?)", "INDEX litequeue_jobs_claim (kind=? AND priority=? AND run_at<?)"},
		store.KeptDueKindsSQL: {"INDEX litequeue_jobs_claim (kind=? AND priority=? AND run_at<?)"},
		store.KeptByStateSQL:  nil,
	} {
		p := storetest.PlanOf(t, db, query, 0, 0, 0)
		for _, s := range searches {
			if !strings.Contains(p, s) {
				t.Errorf("the plan does not read %s:\n%s\nplan: %s", s, query, p)
			}
		}
		if strings.Contains(p, "SCAN j") || strings.Contains(p, "SCAN litequeue_jobs") {
			t.Errorf("the plan scans the jobs:\n%s\nplan: %s", query, p)
		}
	}
}
