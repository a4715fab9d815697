package litequeue_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_NextDueSeesLeases shows NextDue reporting a running job's lease
// expiry, so that a test can step to the rescue.
func TestQueue_NextDueSeesLeases(t *testing.T) {
	t.Parallel()
	held := stallHolder(t, litequeue.Options{})
	q2 := held.q2 // handles nothing
	next, ok, err := q2.NextDue(t.Context())
	if err != nil || !ok || !next.Equal(epoch.Add(litequeue.DefaultVisibilityTimeout)) {
		t.Fatalf("NextDue = %v %v %v, want the lease expiry", next, ok, err)
	}
	if r := held.release(); r.n != 1 || r.err != nil {
		t.Fatalf("RunDue = %d, %v; want 1 run", r.n, r.err)
	}
	if _, ok, _ := q2.NextDue(t.Context()); ok {
		t.Fatal("NextDue reports work on an empty queue")
	}
	var types []string
	for _, a := range history(t, q2, 1) {
		types = append(types, string(a.Outcome))
	}
	if diff := cmp.Diff([]string{"completed"}, types); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
}
