package litequeue

import (
	"testing"
	"time"
)

// TestPool_Limit: a pool leases ahead only while its handlers' moving
// average run time is at most shortRun, and never with a Concurrency of 1.
func TestPool_Limit(t *testing.T) {
	t.Parallel()
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
