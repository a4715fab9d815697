package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// verdicts evaluates every target on rs, by name: its verdict, and for a
// reported figure the figure too.
func verdicts(rs results) map[string]string {
	out := map[string]string{}
	for _, t := range targets {
		v, verdict := t.verdict(rs)
		if verdict == "reported" {
			verdict += " " + v
		}
		out[t.name] = verdict
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
		rateName = "earlier target: growth: drain with 1,000,000 waiting ≥ 90% of the rate with 10,000 (growth1m / growth10k)"
		flatName = "earlier target: peak RSS flat at 1,000,000 waiting: growth1m's ≤ 1.1× growth10k's"
		diskName = "earlier target: bytes on disk per waiting 100-byte job, 1,000,000 waiting (growth1m)"
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
	add(rs, "bare", "drain", result{JobsPerSec: 50000})            // 60%: met
	add(rs, "litequeue", "enqueue16", result{JobsPerSec: 40000})
	add(rs, "asynq-nopersist", "enqueue16", result{JobsPerSec: 50000}) // missed
	add(rs, "litequeue", "idle", result{PhaseCPUms: 3, Seconds: 10})
	add(rs, "backlite", "idle", result{PhaseCPUms: 0.3, Seconds: 10}) // missed
	v := verdicts(rs)
	for name, want := range map[string]string{
		"drain ≥ 25× goqite":                                              "met",
		"drain ≥ 3× asynq without persistence":                            "missed",
		"drain ≥ 60% of bare drain":                                       "met",
		"earlier target: enqueue16 ≥ asynq without persistence":           "missed",
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
	if !strings.Contains(b.String(), "| drain: 16 workers, jobs/s | 30,000 | — | — | — | — | — | 12,345 |") {
		t.Errorf("drain row lacks asynq-nopersist's median in:\n%s", b.String())
	}
}

// TestTargets_ServerAgainstRiverTuned: on the server, drain, its client CPU
// per job and latency are held to River tuned, not to River's defaults,
// which cap its drain near 160 jobs/s; enqueue16 to both River peers.
func TestTargets_ServerAgainstRiverTuned(t *testing.T) {
	const (
		drain = "server drain ≥ 1.5× River tuned"
		cpu   = "server drain: client CPU per job ≤ River tuned's"
		enq   = "server enqueue16 ≥ 1.5× River"
		enqT  = "server enqueue16 ≥ 1.5× River tuned"
		lat50 = "server latency p50 from the Enqueue call ≤ River tuned's"
		lat99 = "server latency p99 from the Enqueue call ≤ River tuned's"
	)
	for _, tc := range []struct {
		name  string
		tuned result // river-postgres-tuned's drain
		lat   result // river-postgres-tuned's latency
		want  map[string]string
	}{
		{
			"at the limits",
			result{JobsPerSec: 2000, CPUusPerJob: 100},
			result{P50ms: 4.4, P99ms: 27},
			map[string]string{drain: "met", cpu: "met", enq: "met", enqT: "missed", lat50: "met", lat99: "met"},
		},
		{
			"past them",
			result{JobsPerSec: 2001, CPUusPerJob: 99.9},
			result{P50ms: 2.2, P99ms: 21},
			map[string]string{drain: "missed", cpu: "missed", enq: "met", enqT: "missed", lat50: "missed", lat99: "missed"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := results{}
			add(rs, "litequeue-postgres", "drain", result{JobsPerSec: 3000, CPUusPerJob: 100})
			add(rs, "river-postgres", "drain", result{JobsPerSec: 159, CPUusPerJob: 189}) // River's defaults: no target
			add(rs, "river-postgres-tuned", "drain", tc.tuned)
			add(rs, "litequeue-postgres", "enqueue16", result{JobsPerSec: 3000})
			add(rs, "river-postgres", "enqueue16", result{JobsPerSec: 2000})       // 1.5×
			add(rs, "river-postgres-tuned", "enqueue16", result{JobsPerSec: 2001}) // 1.499×
			add(rs, "litequeue-postgres", "latency", result{P50ms: 4.4, P99ms: 27})
			add(rs, "river-postgres-tuned", "latency", tc.lat)
			v := verdicts(rs)
			for name, want := range tc.want {
				if got := v[name]; got != want {
					t.Errorf("%s: got %q, want %q", name, got, want)
				}
			}
			for _, gone := range []string{"earlier target: drain ≥ River on PostgreSQL", "earlier target: enqueue16 ≥ River on PostgreSQL"} {
				if got, ok := v[gone]; ok {
					t.Errorf("%s: %q; want no such target (River's defaults cap its drain)", gone, got)
				}
			}
		})
	}
}

// TestWriteReport_SaysWhichPeerRanWithWhichSettings reads result lines as
// run.sh writes them and checks that the Peers table gives each column's
// settings as its runs printed them, and that each target names the peer it
// is compared with.
func TestWriteReport_SaysWhichPeerRanWithWhichSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	lines := []string{
		`{"peer":"river","workload":"drain","jobs_per_s":159,"settings":"FetchCooldown 100ms (River's defaults)"}`,
		`{"peer":"river-postgres-tuned","workload":"drain","jobs_per_s":2000,"settings":"FetchCooldown 1ms (tuned)"}`,
		`{"peer":"river-postgres-tuned","workload":"latency","p50_ms":2.2,"settings":"FetchCooldown 1ms (tuned)"}`,
		`{"peer":"river-postgres-tuned","workload":"enqueue16","jobs_per_s":2000,"settings":"FetchCooldown 2ms | other"}`,
		`{"peer":"litequeue-postgres","workload":"drain","jobs_per_s":3000,"settings":"postgres.Open"}`,
		`{"peer":"goqite","workload":"drain","failed":"exit 1: boom"}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeReport(&b, rs, "")
	out := b.String()
	for _, want := range []string{
		"| river | FetchCooldown 100ms (River's defaults) |",
		"| river-postgres-tuned | FetchCooldown 1ms (tuned); and in other runs: FetchCooldown 2ms \\| other |",
		"| litequeue-postgres | postgres.Open |",
		"| goqite | not recorded (no run of this peer printed its settings) |",
		"| litequeue | not run |",
		"| litequeue-postgres | server drain ≥ 1.5× River tuned | river-postgres-tuned, drain | 3,000 / 2,000 = 1.50× (want ≥ 1.5×) | met |",
		"| litequeue | pickup p50 ≤ 5 ms (a job of another process) | a limit | no data | not measured |",
		"| drain: 16 workers, jobs/s | — | FAILED (1 of 1 runs) | 159 | — |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q in:\n%s", want, out)
		}
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
	dashes := strings.Repeat(" — |", 8)
	for _, want := range []string{
		"| latency p50, ms (from the Enqueue call) |" + dashes + " 4.50 (4.40–4.60) | — | — |",
		"| latency p99, ms (from the Enqueue call) |" + dashes + " 28.0 (27.0–29.0) | — | — |",
		"| latency p50, ms (from Enqueue's return) |" + dashes + " 0.05 (0.00–0.10) | — | — |",
		"| latency: handlers started before Enqueue returned, % (0 ms from the return) |" + dashes + " 34.8 (31.0–38.5) | — | — |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no line %q in:\n%s", want, b.String())
		}
	}
}

// TestPeers_EveryPeerHasAColumnAndSettings: the report's columns are the
// peers the binary runs, each with its settings, and River's two set-ups
// say their fetch settings by River's names.
func TestPeers_EveryPeerHasAColumnAndSettings(t *testing.T) {
	if run, cols := peerNames(), slices.Sorted(slices.Values(peerOrder)); !slices.Equal(run, cols) {
		t.Errorf("the peers run are\n%q, the report's columns\n%q", run, cols)
	}
	for name, p := range peers {
		if p.settings == "" || p.open == nil {
			t.Errorf("%s: no settings or opener", name)
		}
	}
	for name, want := range map[string]string{
		"river":                "FetchCooldown 100ms, FetchPollInterval 1s (River's defaults)",
		"river-postgres":       "FetchCooldown 100ms, FetchPollInterval 1s (River's defaults)",
		"river-tuned":          "FetchCooldown 1ms, FetchPollInterval 50ms (tuned)",
		"river-postgres-tuned": "FetchCooldown 1ms, FetchPollInterval 50ms (tuned)",
	} {
		if got := peers[name].settings; !strings.HasSuffix(got, want) {
			t.Errorf("%s: settings %q, want them to end %q", name, got, want)
		}
	}
}
