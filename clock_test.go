package litequeue_test

import (
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_ClockWentBack plays a device whose clock is set back an hour
// while a job runs and whose worker then dies: the lease, which now seems
// to end an hour and 30s ahead, is trusted for one visibility timeout from
// the moment it is seen, not for the whole hour.
func TestQueue_ClockWentBack(t *testing.T) {
	clk1, clk2 := newMock(), newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk1, Retry: fixedPolicy})
	q2 := openAt(t, path, litequeue.Options{Clock: clk2, Retry: fixedPolicy})
	g := newGate()
	q1.Handle("k", g.handle)
	j := enqueue(t, q1, "k", nil)
	done := runDueAsync(q1)
	<-g.started
	defer func() { close(g.release); <-done }()

	clk2.Set(epoch.Add(-time.Hour)) // q1 is paused; q2's clock went back
	runDue(t, q2)                   // sees the lease and cuts it to 30s from now
	clk2.Add(litequeue.DefaultVisibilityTimeout - time.Millisecond)
	runDue(t, q2)
	if got := get(t, q2, j.ID).State; got != litequeue.Running {
		t.Fatalf("state %s a millisecond before the cut lease ends, want running", got)
	}
	clk2.Add(time.Millisecond)
	runDue(t, q2)
	h := history(t, q2, j.ID)
	if len(h) != 1 || h[0].Outcome != litequeue.OutcomeLeaseExpired {
		t.Fatalf("history = %+v, want one lease_expired row", h)
	}
}
