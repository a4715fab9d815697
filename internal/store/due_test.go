package store_test

import (
	"strings"
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
	for _, tc := range []struct {
		name  string
		query string
		args  []any
		index string
	}{
		{"leases and pauses", store.NextLeaseSQL, nil, "litequeue_jobs_lease"},
		{"a kind's next pending job", store.NextPendingSQL, []any{"k"}, "litequeue_jobs_next"},
		{"expired leases", store.ExpiredSQL, []any{0, 10}, "litequeue_jobs_lease"},
	} {
		p := storetest.PlanOf(t, db, tc.query, tc.args...)
		if !strings.Contains(p, "INDEX "+tc.index) {
			t.Errorf("%s: the plan does not use %s:\n%s\nplan: %s", tc.name, tc.index, tc.query, p)
		}
		if strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s: the query sorts every match instead of reading an index in order:\n%s\nplan: %s", tc.name, tc.query, p)
		}
	}
}
