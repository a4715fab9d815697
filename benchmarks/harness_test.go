package main

import (
	"testing"
	"time"
)

// TestTracker_HandlerStartedBeforeReturn: a handler that starts while its
// Enqueue is still on its way back gives a sample of 0 ms from the return
// (not a negative one, not none), counts in the share of early starts, and
// keeps its full latency from the call.
func TestTracker_HandlerStartedBeforeReturn(t *testing.T) {
	const ms = int64(time.Millisecond)
	tr := newTracker(100, 1)
	tr.trackLatency()
	for i := range 100 {
		tr.enqueued[i].Store(10 * ms)
		if i < 60 { // started 1 ms before Enqueue returned
			tr.started[i].Store(13 * ms)
			tr.returned[i].Store(14 * ms)
		} else { // started 2 ms after it returned
			tr.started[i].Store(15 * ms)
			tr.returned[i].Store(13 * ms)
		}
	}
	if p50, p99 := tr.latencies(tr.enqueued); p50 != 3 || p99 != 5 {
		t.Errorf("from the call: p50, p99 = %v, %v ms; want 3, 5", p50, p99)
	}
	if p50, p99 := tr.latencies(tr.returned); p50 != 0 || p99 != 2 {
		t.Errorf("from the return: p50, p99 = %v, %v ms; want 0, 2", p50, p99)
	}
	if got := tr.startedBefore(tr.returned); got != 60 {
		t.Errorf("started before the return: %v%%, want 60%%", got)
	}
	if got := tr.startedBefore(tr.enqueued); got != 0 {
		t.Errorf("started before the call: %v%%, want 0%%", got)
	}
}

// TestTracker_MarksInCallOrder drives the tracker's marks in the order a
// fast peer produces them (call, handler start, return) and checks that
// the job's sample from the return is 0 and counted as early.
func TestTracker_MarksInCallOrder(t *testing.T) {
	tr := newTracker(1, 1)
	tr.trackLatency()
	tr.markEnqueue(0)
	if err := tr.run(newArgs(0)); err != nil {
		t.Fatal(err)
	}
	for tr.started[0].Load() >= int64(time.Since(tr.t0)) {
		// Let the monotonic clock move past the start.
	}
	tr.markReturn(0)
	if p50, _ := tr.latencies(tr.returned); p50 != 0 {
		t.Errorf("from the return: p50 = %v ms, want 0", p50)
	}
	if got := tr.startedBefore(tr.returned); got != 100 {
		t.Errorf("started before the return: %v%%, want 100%%", got)
	}
}
