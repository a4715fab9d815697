package litequeue

import (
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
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
// stopped index for List of dead, discarded, cancelled and expired jobs
// (the CLI's dead list), the finished index for retention and Count of
// any terminal state, the claim and lease indexes for pending and running
// jobs, the expiry index for pending jobs whose expiry has come.
func TestQueryPlans_PartialIndexes(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	list := func(f Filter) (string, []any) { return f.query(store.JobColumns, true) }
	count := func(f Filter) (string, []any) { return f.query("id", false) }
	for _, tc := range []struct {
		name  string
		query string
		args  []any
		index string
	}{
		{"list dead", "", nil, "litequeue_jobs_stopped"},
		{"list cancelled on a queue", "", nil, "litequeue_jobs_stopped"},
		{"count completed", "", nil, "litequeue_jobs_finished"},
		{"count dead of a kind", "", nil, "litequeue_jobs_finished"},
		{"list pending", "", nil, "litequeue_jobs_claim"},
		{"list running", "", nil, "litequeue_jobs_lease"},
		{"retention", expiredJobsSQL + purgeLimitSQL, []any{[]State{Completed, Discarded}, 0, 10}, "litequeue_jobs_finished"},
		{"retention by rule", expiredJobsSQL + " AND kind = ? AND NOT (queue = ? AND kind = ?)" + purgeLimitSQL,
			[]any{[]State{Completed, Discarded}, 0, "k", "q", "k", 10}, "litequeue_jobs_finished"},
		{"expiry", anyExpirySQL, []any{0}, "litequeue_jobs_expiry"},
		{"expiry before a claim", claimFirstSQL, []any{0}, "litequeue_jobs_expiry"},
		{"leases and pauses", nextLeaseSQL, nil, "litequeue_jobs_lease"},
		{"dead purge count", countDeadSQL, []any{0}, "litequeue_jobs_finished"},
	} {
		switch tc.name {
		case "list dead":
			tc.query, tc.args = list(Filter{State: Dead})
		case "list cancelled on a queue":
			tc.query, tc.args = list(Filter{State: Cancelled, Queue: "q", Limit: 5})
		case "count completed":
			tc.query, tc.args = count(Filter{State: Completed})
		case "count dead of a kind":
			tc.query, tc.args = count(Filter{State: Dead, Kind: "k", Limit: 10})
		case "list pending":
			tc.query, tc.args = list(Filter{State: Pending})
		case "list running":
			tc.query, tc.args = list(Filter{State: Running})
		}
		if p := storetest.PlanOf(t, q.st.reads.DB, tc.query, tc.args...); !strings.Contains(p, "INDEX "+tc.index) {
			t.Errorf("%s: the plan does not use %s:\n%s\nplan: %s", tc.name, tc.index, tc.query, p)
		}
	}
}

// TestQueryPlans_ListPages checks that a page of finished jobs, newest
// first or from a cursor, reads its rows in ID order and stops at its
// Limit: the newest 100 dead jobs of a million are as quick to list as of
// a hundred (BenchmarkList_NewestDead measures it). Dead, discarded,
// cancelled and expired jobs are read from litequeue_jobs_stopped;
// completed ones, in no index in ID order, from the table itself.
func TestQueryPlans_ListPages(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	for _, f := range []Filter{
		{State: Dead, Desc: true, Limit: 100},
		{State: Dead, Desc: true, Before: 1000, Limit: 100},
		{State: Dead, After: 1000, Limit: 100},
		{State: Dead, Queue: "q", Kind: "k", ErrorContains: "refused", Desc: true, Limit: 100},
		{State: Expired, Desc: true, Limit: 100},
		{State: Completed, Desc: true, Limit: 100},
		{State: Completed, Desc: true, Before: 1000, Limit: 100},
		{State: Completed, Queue: "q", After: 1000, Limit: 100},
	} {
		query, args := f.query(store.JobColumns, true)
		p := storetest.PlanOf(t, q.st.reads.DB, query, args...)
		reads := "INDEX litequeue_jobs_stopped"
		if f.State == Completed {
			reads = "SCAN litequeue_jobs"
			if f.After > 0 || f.Before > 0 {
				reads = "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY"
			}
		}
		if !strings.Contains(p, reads) || strings.Contains(p, "TEMP B-TREE") ||
			(f.State == Completed && strings.Contains(p, " INDEX ")) {
			t.Errorf("%+v: the plan does not read %q in order:\n%s\nplan: %s", f, reads, query, p)
		}
	}
}
