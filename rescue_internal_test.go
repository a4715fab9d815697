package litequeue

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// TestRescue_ManySightings: Work's rescue sees more expired leases than one
// batch holds. The sightings not yet confirmed do not take the room of the
// next ones, so every lease is seen within two looks, and all are rescued
// a confirmWait after that, not one batch per confirmWait.
func TestRescue_ManySightings(t *testing.T) {
	t.Parallel()
	const n, vt = rescueBatch + 44, DefaultVisibilityTimeout
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	q := openTemp(t, Options{Clock: clk})
	ctx := t.Context()
	if _, err := q.EnqueueMany(ctx, "k", make([]any, n)); err != nil {
		t.Fatal(err)
	}
	// A dead worker's leases, all ending now.
	_, err := q.st.reads.Exec(`UPDATE litequeue_jobs SET state = 'running', attempt = 1, token = 1,
		lease_until = ?, started_at = ?, worker = 'gone', max_tries = 3`, store.MS(clk.Now()), store.MS(clk.Now().Add(-vt)))
	if err != nil {
		t.Fatal(err)
	}
	var seen sightings
	rescue := func() int {
		got, err := q.res.rescue(ctx, &seen)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	total := rescue() // sees the first batch
	clk.Add(time.Second)
	total += rescue() // sees the rest
	clk.Add(confirmWait(vt) - time.Second)
	total += rescue() // the first batch is confirmed
	clk.Add(time.Second)
	total += rescue() // the rest
	if total != n {
		t.Fatalf("%d of %d expired leases rescued a confirmWait after the second look", total, n)
	}
}
