package litequeue

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// TestPool_Limit: a pool leases ahead only while its handlers' moving
// average run time is at most shortRun, and never with a Concurrency of 1.
func TestPool_Limit(t *testing.T) {
	for _, tc := range []struct {
		concurrency int
		runs        []time.Duration
		want        int
	}{
		{4, nil, 4}, // nothing known yet
		{4, []time.Duration{0, time.Millisecond}, 16},
		{4, []time.Duration{shortRun}, 16},
		{4, []time.Duration{shortRun + 1}, 4},
		{4, []time.Duration{time.Second, 0, 0, 0}, 4},                               // the average still long
		{4, []time.Duration{0, 0, 0, time.Second}, 4},                               // one slow run is enough
		{4, append([]time.Duration{time.Second}, make([]time.Duration, 40)...), 16}, // and it recovers
		{1, []time.Duration{0, 0}, 1},
	} {
		p := &pool{opts: WorkerOptions{Concurrency: tc.concurrency}, grow: make(chan struct{}, 1)}
		for _, d := range tc.runs {
			p.ran(d)
		}
		if got := p.limit(); got != tc.want {
			t.Errorf("Concurrency %d, runs %v: limit %d, want %d", tc.concurrency, tc.runs, got, tc.want)
		}
	}
}

// TestRescue_ManySightings: Work's rescue sees more expired leases than one
// batch holds. The sightings not yet confirmed do not take the room of the
// next ones, so every lease is seen within two looks, and all are rescued
// a confirmWait after that, not one batch per confirmWait.
func TestRescue_ManySightings(t *testing.T) {
	const n, vt = rescueBatch + 44, DefaultVisibilityTimeout
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	q, err := Open(filepath.Join(t.TempDir(), "rescue.db"), Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	if _, err := q.EnqueueMany(ctx, "k", make([]any, n)); err != nil {
		t.Fatal(err)
	}
	// A dead worker's leases, all ending now.
	_, err = q.db.Exec(`UPDATE litequeue_jobs SET state = 'running', attempt = 1, token = 1,
		lease_until = ?, started_at = ?, worker = 'gone', max_tries = 3`, ms(clk.Now()), ms(clk.Now().Add(-vt)))
	if err != nil {
		t.Fatal(err)
	}
	var seen sightings
	rescue := func() int {
		got, err := q.rescue(ctx, &seen)
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
