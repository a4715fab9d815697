package litequeue_test

import (
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestQueue_RescueLookHoldsNoRow: on PostgreSQL, a Work loop's look
// through the expired leases holds none of their rows while it only sees
// them. The live holder's renewal skips a row another transaction holds;
// after a clock jumped forward, a look that held the row would turn away
// the renewal that proves the holder alive, and the job would be rescued
// while it runs.
func TestQueue_RescueLookHoldsNoRow(t *testing.T) {
	t.Parallel()
	if !onPostgres {
		t.Skip("row locks are PostgreSQL's: the file's writers take turns")
	}
	ctx := t.Context()
	clk1, clk2 := newMock(), newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk1})
	q2 := openAt(t, path, litequeue.Options{Clock: clk2})
	g := newGate()
	q1.Handle("k", g.handle)
	j := enqueue(t, q1, "k", nil)
	done := runDueAsync(q1)
	defer func() {
		close(g.release)
		<-done
	}()
	<-g.started
	// q2's clock is past the lease's end; q1's stands still, so it renews
	// no more.
	clk2.Add(litequeue.DefaultVisibilityTimeout + time.Second)

	var lockErr error
	rescued, err := litequeue.RescueLook(ctx, q2, func() {
		tx, err := q2.DB().BeginTxx(ctx, nil)
		if err != nil {
			lockErr = err
			return
		}
		defer tx.Rollback()
		_, lockErr = tx.ExecContext(ctx, `SELECT id FROM litequeue_jobs WHERE id = $1 FOR UPDATE NOWAIT`, j.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	if rescued != 0 {
		t.Fatalf("the first look rescued %d leases; want none (a lease is rescued once seen expired for a while)", rescued)
	}
	if lockErr != nil {
		t.Errorf("while the look only saw the expired lease, its row could not be taken: %v", lockErr)
	}
	if got := get(t, q2, j.ID).State; got != litequeue.Running {
		t.Errorf("job state after the look %s; want running", got)
	}
}
