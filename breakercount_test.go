package litequeue_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// breakerOf reads the breaker of kind from q.Breakers.
func breakerOf(t *testing.T, q *litequeue.Queue, kind string) litequeue.BreakerStats {
	t.Helper()
	all, err := q.Breakers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return all[kind]
}

// TestQueue_BreakersFailures: a closed breaker counts the failed runs of
// its Window up to the read, which leave it as the window moves on; an
// open one counts those that opened it, also after its window; a Queue
// without the handler reads the threshold and window that the worker
// recorded, and, with nothing recorded, counts over the default window
// with no threshold.
func TestQueue_BreakersFailures(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("sync", doomed, litequeue.WithBreaker(litequeue.Breaker{Failures: 3, Window: 2 * time.Minute, Ratio: 1}))
	fail := func(n int) {
		t.Helper()
		for range n {
			enqueue(t, q, "sync", nil, litequeue.MaxTries(1))
		}
		runDue(t, q)
	}
	fail(2)
	want := litequeue.BreakerStats{State: "closed", Failures: 2, Threshold: 3, Window: 2 * time.Minute}
	if diff := cmp.Diff(want, breakerOf(t, q, "sync")); diff != "" {
		t.Errorf("after 2 failures (-want +got):\n%s", diff)
	}
	clk.Add(90 * time.Second)
	fail(1)
	if got := breakerOf(t, q, "sync"); got.State != "open" || got.Failures != 3 {
		t.Fatalf("after 3 failures in 2m the breaker is %s with %d failures, want open with 3", got.State, got.Failures)
	}
	clk.Add(time.Hour)
	if got := breakerOf(t, q, "sync").Failures; got != 3 {
		t.Errorf("an hour after it opened: Failures = %d, want the 3 that opened it", got)
	}

	other := openAt(t, path, litequeue.Options{Clock: clk})
	got := breakerOf(t, other, "sync")
	if got.Failures != 3 || got.Threshold != 3 || got.Window != 2*time.Minute {
		t.Errorf("a Queue without the handler reads %+v, want 3 failures of a threshold of 3 in 2m, as recorded", got)
	}
	if _, err := q.DB().Exec(`DELETE FROM litequeue_policies`); err != nil {
		t.Fatal(err)
	}
	got = breakerOf(t, other, "sync")
	if got.Threshold != 0 || got.Window != time.Minute || got.Failures != 1 {
		t.Errorf("with nothing recorded: %+v, want no threshold, the default window of 1m and the 1 failure in the minute before it opened", got)
	}
}
