package main

import (
	"strings"
	"testing"
)

// verdicts evaluates every target on rs, by name.
func verdicts(rs results) map[string]string {
	out := map[string]string{}
	for _, t := range targets {
		v, met, known := t.eval(rs)
		switch {
		case !known:
			out[t.name] = "not measured"
		case t.reported:
			out[t.name] = "reported " + v
		case met:
			out[t.name] = "met"
		default:
			out[t.name] = "missed"
		}
	}
	return out
}

func add(rs results, peer, workload string, r result) {
	r.Peer, r.Workload = peer, workload
	k := [2]string{peer, workload}
	if rs[k] == nil {
		rs[k] = &runs{}
	}
	rs[k].ok = append(rs[k].ok, r)
}

func TestTargets_Growth(t *testing.T) {
	const (
		rateName = "growth: drain with 1,000,000 waiting ≥ 90% of the rate with 10,000 (growth1m / growth10k)"
		flatName = "peak RSS flat at 1,000,000 waiting: growth1m's ≤ 1.1× growth10k's"
		diskName = "bytes on disk per waiting 100-byte job, 1,000,000 waiting (growth1m)"
	)
	for _, tc := range []struct {
		name               string
		rate1m, rss1m      float64
		wantRate, wantFlat string
	}{
		{"at the limits", 9000, 22, "met", "met"},
		{"over the limits", 8999, 22.1, "missed", "missed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := results{}
			add(rs, "litequeue", "growth10k", result{JobsPerSec: 10000, MaxRSSMB: 20, DiskPerJob: 300})
			add(rs, "litequeue", "growth1m", result{JobsPerSec: tc.rate1m, MaxRSSMB: tc.rss1m, DiskPerJob: 250})
			v := verdicts(rs)
			if got := v[rateName]; got != tc.wantRate {
				t.Errorf("rate target: got %q, want %q", got, tc.wantRate)
			}
			if got := v[flatName]; got != tc.wantFlat {
				t.Errorf("flat RSS target: got %q, want %q", got, tc.wantFlat)
			}
			if got, want := v[diskName], "reported 250 bytes (no limit)"; got != want {
				t.Errorf("disk row: got %q, want %q", got, want)
			}
		})
	}
}

func TestTargets_RatiosAgainstPeers(t *testing.T) {
	rs := results{}
	add(rs, "litequeue", "drain", result{JobsPerSec: 30000})
	add(rs, "goqite", "drain", result{JobsPerSec: 1000})           // 30×: met
	add(rs, "asynq-nopersist", "drain", result{JobsPerSec: 12000}) // 2.5×: missed
	add(rs, "bare", "drain", result{JobsPerSec: 60000})            // 50%: met
	add(rs, "litequeue", "enqueue16", result{JobsPerSec: 40000})
	add(rs, "asynq-nopersist", "enqueue16", result{JobsPerSec: 50000}) // missed
	add(rs, "litequeue", "idle", result{PhaseCPUms: 3, Seconds: 10})
	add(rs, "backlite", "idle", result{PhaseCPUms: 0.3, Seconds: 10}) // missed
	v := verdicts(rs)
	for name, want := range map[string]string{
		"drain ≥ 25× goqite":                                              "met",
		"drain ≥ 3× asynq without persistence":                            "missed",
		"drain ≥ 50% of bare drain":                                       "met",
		"enqueue16 ≥ asynq without persistence":                           "missed",
		"idle CPU ≤ backlite's":                                           "missed",
		"batch ≥ 2× backlite":                                             "not measured",
		"earlier target: single Enqueue ≥ 90% of bare one-row-per-commit": "not measured",
	} {
		if got := v[name]; got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

func TestWriteReport_AsynqNopersistColumn(t *testing.T) {
	rs := results{}
	add(rs, "litequeue", "drain", result{JobsPerSec: 30000})
	add(rs, "asynq-nopersist", "drain", result{JobsPerSec: 12345})
	var b strings.Builder
	writeReport(&b, rs, "")
	if !strings.Contains(b.String(), "| asynq-nopersist |") {
		t.Fatalf("no asynq-nopersist column in:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "| drain: 16 workers, jobs/s | 30,000 | — | — | — | — | 12,345 |") {
		t.Errorf("drain row lacks asynq-nopersist's median in:\n%s", b.String())
	}
}

// TestWriteReport_LatencyFromTheCallAndFromTheReturn: the table shows the
// latency both ways, each row saying which, and the share of handlers that
// started before Enqueue returned.
func TestWriteReport_LatencyFromTheCallAndFromTheReturn(t *testing.T) {
	rs := results{}
	add(rs, "litequeue-postgres", "latency", result{P50ms: 4.4, P99ms: 27, AfterP50ms: 0, AfterP99ms: 20, BeforeReturnPct: 38.5})
	add(rs, "litequeue-postgres", "latency", result{P50ms: 4.6, P99ms: 29, AfterP50ms: 0.1, AfterP99ms: 22, BeforeReturnPct: 31})
	var b strings.Builder
	writeReport(&b, rs, "")
	dashes := strings.Repeat(" — |", 7)
	for _, want := range []string{
		"| latency p50, ms (from the Enqueue call) |" + dashes + " 4.50 (4.40–4.60) | — |",
		"| latency p99, ms (from the Enqueue call) |" + dashes + " 28.0 (27.0–29.0) | — |",
		"| latency p50, ms (from Enqueue's return) |" + dashes + " 0.05 (0.00–0.10) | — |",
		"| latency: handlers started before Enqueue returned, % (0 ms from the return) |" + dashes + " 34.8 (31.0–38.5) | — |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no line %q in:\n%s", want, b.String())
		}
	}
}
