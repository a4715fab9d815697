package litequeue

import (
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_HotPath checks that the queries run once per claim or per
// batch read an index in the order they need and stop at their LIMIT,
// instead of sorting every matching row each time: a job queue's hot path
// must not slow down as its backlog grows. (The claim's own statements
// are the file engine's: see its TestQueryPlans_Claim.)
func TestQueryPlans_HotPath(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	for query, args := range map[string][]any{
		dueExpirySQL: {0, 10},
	} {
		if p := storetest.PlanOf(t, q.st.reads.DB, query, args...); strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("query sorts every match instead of reading an index in order:\n%s\nplan: %s", query, p)
		}
	}
}

// TestQueryPlans_PartialIndexes checks that the reads of jobs in one state
// use the partial index that holds that state, not every row: the
// finished index for retention, the lease index for running jobs, the
// expiry index for pending jobs whose expiry has come, the breaker's index
// for failed runs. (The store's test of the same name checks List's and
// Count's.)
func TestQueryPlans_PartialIndexes(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	for _, tc := range []struct {
		name  string
		query string
		args  []any
		index string
	}{
		{"retention", expiredJobsSQL + purgeLimitSQL, []any{[]State{Completed, Discarded}, 0, 10}, "litequeue_jobs_finished"},
		{"retention by rule", expiredJobsSQL + " AND kind = ? AND NOT (queue = ? AND kind = ?)" + purgeLimitSQL,
			[]any{[]State{Completed, Discarded}, 0, "k", "q", "k", 10}, "litequeue_jobs_finished"},
		{"expiry", anyExpirySQL, []any{0}, "litequeue_jobs_expiry"},
		{"expiry before a claim", claimFirstSQL, []any{0}, "litequeue_jobs_expiry"},
		{"leases and pauses", nextLeaseSQL, nil, "litequeue_jobs_lease"},
	} {
		if p := storetest.PlanOf(t, q.st.reads.DB, tc.query, tc.args...); !strings.Contains(p, "INDEX "+tc.index) {
			t.Errorf("%s: the plan does not use %s:\n%s\nplan: %s", tc.name, tc.index, tc.query, p)
		}
	}
}
