package store_test

import (
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
	for what, class := range map[string]store.Class{
		"every job":                store.Class{},
		"the defaults' class":      store.ClassOf(store.Scope{}, store.Scope{Kind: "k"}, store.Scope{Queue: "q"}),
		"a rule's class":           store.ClassOf(store.Scope{Kind: "k"}, store.Scope{Queue: "q", Kind: "k"}),
		"a rule of kind and queue": store.ClassOf(store.Scope{Queue: "q", Kind: "k"}),
	} {
		query, args := store.FinishedJobsQuery(class, []string{"completed", "discarded"}, 0, 10)
		storetest.ReadsIndex(t, db, what, "litequeue_jobs_finished", query, args...)
	}
	storetest.ReadsIndex(t, db, "expired keys", "litequeue_keys_expiry", store.ExpiredKeysSQL, 0, 10)
}
