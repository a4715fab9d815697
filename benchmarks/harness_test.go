package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
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

// runSmall runs a short workload of jobs (latency: 200 a second for
// 250 ms) on peer, in a fresh directory or on the test server; it skips a
// PostgreSQL peer without a server.
func runSmall(t *testing.T, peer, workload string, jobs int) result {
	t.Helper()
	dir := t.TempDir()
	cfg := config{
		peer: peer, workload: workload, dir: dir, path: filepath.Join(dir, "queue.db"),
		jobs: jobs, postgres: os.Getenv("LITEQUEUE_TEST_POSTGRES"),
		rate: 200, latencyFor: 250 * time.Millisecond, profileHz: 100,
	}
	if cfg.postgres == "" && strings.HasSuffix(strings.TrimSuffix(peer, "-tuned"), "-postgres") {
		t.Skip("LITEQUEUE_TEST_POSTGRES is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runWorkload(ctx, peers[peer].open, workloads[workload], cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestLatency_BothMarks runs the latency workload on litequeue and on River
// tuned, on the file and on the server: every job gives a sample from the
// call and one from the return, none negative.
func TestLatency_BothMarks(t *testing.T) {
	for _, peer := range []string{"litequeue", "river-tuned", "litequeue-postgres", "river-postgres-tuned"} {
		t.Run(peer, func(t *testing.T) {
			res := runSmall(t, peer, "latency", 0)
			if res.Jobs != 50 {
				t.Errorf("jobs: %d, want 50", res.Jobs)
			}
			if !(0 <= res.AfterP50ms && res.AfterP50ms <= res.P50ms && res.P50ms <= res.P99ms && res.AfterP99ms <= res.P99ms) {
				t.Errorf("want 0 ≤ from-return p50 ≤ from-call p50 ≤ from-call p99 and from-return p99 ≤ from-call p99: %+v", res)
			}
			if res.BeforeReturnPct < 0 || res.BeforeReturnPct > 100 {
				t.Errorf("started before the return: %v%%", res.BeforeReturnPct)
			}
		})
	}
}

// TestDrain_RiverTuned drains jobs with River tuned on the file and on the
// server: every job runs once, the phase's CPU per job is measured, and
// River drains faster than its defaults allow (at most MaxWorkers jobs per
// 100 ms FetchCooldown: 160 jobs/s), so the tuned settings took (not
// checked under the race detector, which slows every peer below that).
func TestDrain_RiverTuned(t *testing.T) {
	for _, peer := range []string{"river-tuned", "river-postgres-tuned"} {
		t.Run(peer, func(t *testing.T) {
			res := runSmall(t, peer, "drain", 200)
			if res.Jobs != 200 || res.CPUusPerJob <= 0 {
				t.Errorf("want 200 jobs and CPU per job: %+v", res)
			}
			bound := workers / river.FetchCooldownDefault.Seconds()
			if res.JobsPerSec <= bound && !raceEnabled {
				t.Errorf("drained %v jobs/s, want more than River's default bound of %v", res.JobsPerSec, bound)
			}
		})
	}
}
