package store_test

import (
	"strings"
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
	for name, query := range map[string]string{
		"expiry":                store.AnyExpirySQL,
		"expiry before a claim": store.ClaimFirstSQL,
		"jobs to expire":        store.DueExpirySQL,
	} {
		args := []any{0}
		if query == store.DueExpirySQL {
			args = append(args, 10)
		}
		p := storetest.PlanOf(t, db, query, args...)
		if !strings.Contains(p, "INDEX litequeue_jobs_expiry") {
			t.Errorf("%s: the plan does not use litequeue_jobs_expiry:\n%s\nplan: %s", name, query, p)
		}
		if strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s: the query sorts every match instead of reading an index in order:\n%s\nplan: %s", name, query, p)
		}
	}
}
