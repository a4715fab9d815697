package litequeue_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestClock_HistoryAfterBackJump replays a dead job after the clock went
// back an hour: its history lists the first death, the replay and the run
// after it in the order they happened, although the later rows carry
// earlier times.
func TestClock_HistoryAfterBackJump(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := jumpQueue(t, clk, litequeue.Options{Clock: clk})
	j := enqueue(t, q, "doomed", nil)
	runDue(t, q)
	clk.Set(epoch.Add(-time.Hour))
	if err := q.Replay(t.Context(), j.ID); err != nil {
		t.Fatal(err)
	}
	runDue(t, q)
	want := []litequeue.Outcome{litequeue.OutcomeFailed, litequeue.OutcomeReplayed, litequeue.OutcomeFailed}
	if diff := cmp.Diff(want, outcomes(history(t, q, j.ID))); diff != "" {
		t.Fatalf("history outcomes (-want +got):\n%s", diff)
	}
}
