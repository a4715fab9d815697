package store_test

import (
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_Retention checks that retention's look for finished jobs,
// of every class, reads the finished index (only terminal rows are in it),
// not every job, and that the look for expired keys reads the keys' expiry
// index.
func TestQueryPlans_Retention(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	finished := []string{"completed", "discarded"}
	for _, tc := range []struct {
		name  string
		class store.Class
	}{
		{"every job", store.Class{}},
		{"the defaults' class", store.ClassOf(store.Scope{}, store.Scope{Kind: "k"}, store.Scope{Queue: "q"})},
		{"a rule's class", store.ClassOf(store.Scope{Kind: "k"}, store.Scope{Queue: "q", Kind: "k"})},
		{"a rule of kind and queue", store.ClassOf(store.Scope{Queue: "q", Kind: "k"})},
	} {
		query, args := store.FinishedJobsQuery(tc.class, finished, 0, 10)
		if p := storetest.PlanOf(t, db, query, args...); !strings.Contains(p, "INDEX litequeue_jobs_finished") {
			t.Errorf("%s: the plan does not use litequeue_jobs_finished:\n%s\nplan: %s", tc.name, query, p)
		}
	}
	if p := storetest.PlanOf(t, db, store.ExpiredKeysSQL, 0, 10); !strings.Contains(p, "INDEX litequeue_keys_expiry") {
		t.Errorf("expired keys: the plan does not use litequeue_keys_expiry:\n%s\nplan: %s", store.ExpiredKeysSQL, p)
	}
}
