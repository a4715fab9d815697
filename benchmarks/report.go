package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
)

// Report mode: read the JSON lines of every run (run.sh adds a line with
// "failed" for a run that exited non-zero) and write RESULTS.md.

// peerOrder is the order of the table's columns: the file-based peers, then
// the peers on a PostgreSQL server.
var peerOrder = []string{"litequeue", "goqite", "river", "river-tuned", "backlite", "asynq", "asynq-nopersist", "bare", "litequeue-postgres", "river-postgres", "river-postgres-tuned"}

type runs struct {
	ok          []result
	failed      []string
	unsupported string
	settings    []string // the distinct settings the pair's runs printed
}

type results map[[2]string]*runs // by (peer, workload)

func readResults(path string) (results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rs := results{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r struct {
			result
			Failed string `json:"failed"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, line, err)
		}
		k := [2]string{r.Peer, r.Workload}
		if rs[k] == nil {
			rs[k] = &runs{}
		}
		if r.Settings != "" && !slices.Contains(rs[k].settings, r.Settings) {
			rs[k].settings = append(rs[k].settings, r.Settings)
		}
		switch {
		case r.Failed != "":
			rs[k].failed = append(rs[k].failed, r.Failed)
		case r.Unsupported != "":
			rs[k].unsupported = r.Unsupported
		default:
			rs[k].ok = append(rs[k].ok, r.result)
		}
	}
	return rs, sc.Err()
}

// stat is the median, min and max of one metric over a pair's runs.
type stat struct {
	med, lo, hi float64
	n           int
}

func (rs results) stat(peer, workload string, metric func(result) float64) (stat, bool) {
	r := rs[[2]string{peer, workload}]
	if r == nil || len(r.ok) == 0 {
		return stat{}, false
	}
	v := make([]float64, len(r.ok))
	for i, x := range r.ok {
		v[i] = metric(x)
	}
	slices.Sort(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return stat{med: med, lo: v[0], hi: v[len(v)-1], n: len(v)}, true
}

// cell formats a pair's metric: "median (min–max)", "—" where the peer
// cannot run the workload, "FAILED" where a run failed.
func (rs results) cell(peer, workload string, metric func(result) float64) string {
	r := rs[[2]string{peer, workload}]
	if r == nil {
		return "—"
	}
	if len(r.failed) > 0 {
		return fmt.Sprintf("FAILED (%d of %d runs)", len(r.failed), len(r.failed)+len(r.ok))
	}
	if r.unsupported != "" {
		return "—"
	}
	s, ok := rs.stat(peer, workload, metric)
	if !ok {
		return "—"
	}
	if s.n == 1 {
		return num(s.med)
	}
	return fmt.Sprintf("%s (%s–%s)", num(s.med), num(s.lo), num(s.hi))
}

// num formats a figure with about three significant digits.
func num(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 1000:
		return thousands(int64(math.Round(x)))
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

type row struct {
	label, workload string
	metric          func(result) float64
}

func rate(r result) float64       { return r.JobsPerSec }
func cpuPerJob(r result) float64  { return r.CPUusPerJob }
func rss(r result) float64        { return r.MaxRSSMB }
func diskPerJob(r result) float64 { return r.DiskPerJob }
func p50(r result) float64        { return r.P50ms } // latency from the call, or pickup
func p99(r result) float64        { return r.P99ms }

// idlePer10s scales the idle run's CPU to 10 s of idling.
func idlePer10s(r result) float64 {
	if r.Seconds == 0 {
		return r.PhaseCPUms
	}
	return r.PhaseCPUms * 10 / r.Seconds
}

var tableRows = []row{
	{"enqueue: 1 producer, jobs/s", "enqueue", rate},
	{"enqueue16: 16 producers, jobs/s", "enqueue16", rate},
	{"batch: 1,000 per call, jobs/s", "batch", rate},
	{"batch: CPU µs per job", "batch", cpuPerJob},
	{"drain: 16 workers, jobs/s", "drain", rate},
	{"drain: CPU µs per job", "drain", cpuPerJob},
	{"drain: peak RSS, MB", "drain", rss},
	{"latency p50, ms (from the Enqueue call)", "latency", p50},
	{"latency p99, ms (from the Enqueue call)", "latency", p99},
	{"latency p50, ms (from Enqueue's return)", "latency", func(r result) float64 { return r.AfterP50ms }},
	{"latency p99, ms (from Enqueue's return)", "latency", func(r result) float64 { return r.AfterP99ms }},
	{"latency: handlers started before Enqueue returned, % (0 ms from the return)", "latency", func(r result) float64 { return r.BeforeReturnPct }},
	{"pickup p50, ms (enqueued by another process)", "pickup", p50},
	{"pickup p99, ms (enqueued by another process)", "pickup", p99},
	{"retry: 3 tries each, jobs/s", "retry", rate},
	{"idle: 16 workers, CPU ms per 10 s", "idle", idlePer10s},
	{"drain100k: jobs/s", "drain100k", rate},
	{"drain100k: peak RSS, MB", "drain100k", rss},
	{"growth10k: drain with 10,000 waiting, jobs/s", "growth10k", rate},
	{"growth10k: peak RSS, MB", "growth10k", rss},
	{"growth10k: bytes on disk per waiting 100-byte job", "growth10k", diskPerJob},
	{"growth1m: drain with 1,000,000 waiting, jobs/s", "growth1m", rate},
	{"growth1m: peak RSS, MB", "growth1m", rss},
	{"growth1m: bytes on disk per waiting 100-byte job", "growth1m", diskPerJob},
}

// target is one of the performance targets of a litequeue peer.
type target struct {
	peer string // "litequeue" or "litequeue-postgres"
	name string
	// against is what the peer's figure is compared with: another peer
	// of the same run (whose settings the Peers table shows), another
	// workload of its own, or a fixed limit.
	against string
	eval    func(rs results) (value string, met, known bool)
	// reported marks a figure shown without a limit: its verdict is
	// "reported", never met or missed.
	reported bool
}

// verdict evaluates t on rs: the medians it compares, and "met",
// "missed", "reported" (a figure without a limit) or "not measured".
func (t target) verdict(rs results) (value, verdict string) {
	v, met, known := t.eval(rs)
	switch {
	case !known:
		return v, "not measured"
	case t.reported:
		return v, "reported"
	case met:
		return v, "met"
	}
	return v, "missed"
}

// comparedWith names the reference of a ratio target.
func comparedWith(peer, refPeer, refWorkload string) string {
	if refPeer == peer {
		return "its own " + refWorkload
	}
	return refPeer + ", " + refWorkload
}

// ratioTarget compares peer's median to a reference median of the same run:
// met when peer/ref ≥ min.
func ratioTarget(peer, name, workload string, metric func(result) float64, refPeer, refWorkload string, min float64) target {
	return target{peer: peer, name: name, against: comparedWith(peer, refPeer, refWorkload), eval: func(rs results) (string, bool, bool) {
		ratio, v, ok := rs.ratio(peer, workload, refPeer, refWorkload, metric)
		if !ok {
			return v, false, false
		}
		return fmt.Sprintf("%s (want ≥ %g×)", v, min), ratio >= min, true
	}}
}

// atMostTarget compares peer's median to a reference median of the same
// run: met when peer/ref ≤ max.
func atMostTarget(peer, name, workload string, metric func(result) float64, refPeer, refWorkload string, max float64) target {
	return target{peer: peer, name: name, against: comparedWith(peer, refPeer, refWorkload), eval: func(rs results) (string, bool, bool) {
		ratio, v, ok := rs.ratio(peer, workload, refPeer, refWorkload, metric)
		if !ok {
			return v, false, false
		}
		return fmt.Sprintf("%s (want ≤ %g×)", v, max), ratio <= max, true
	}}
}

// ratio returns the ratio of two medians of the same run and its
// description, "a / b = r×"; ok is false without both.
func (rs results) ratio(peer, workload, refPeer, refWorkload string, metric func(result) float64) (r float64, desc string, ok bool) {
	a, ok1 := rs.stat(peer, workload, metric)
	b, ok2 := rs.stat(refPeer, refWorkload, metric)
	if !ok1 || !ok2 || b.med == 0 {
		return 0, "no data", false
	}
	r = a.med / b.med
	return r, fmt.Sprintf("%s / %s = %.2f×", num(a.med), num(b.med), r), true
}

// maxTarget is met when litequeue's median is at most limit.
func maxTarget(name, workload string, metric func(result) float64, limit float64, unit string) target {
	return target{peer: "litequeue", name: name, against: "a limit", eval: func(rs results) (string, bool, bool) {
		a, ok := rs.stat("litequeue", workload, metric)
		if !ok {
			return "no data", false, false
		}
		return fmt.Sprintf("%s %s (want ≤ %g %s; %.2f× the limit)", num(a.med), unit, limit, unit, a.med/limit), a.med <= limit, true
	}}
}

// reportTarget shows litequeue's median of a figure that has no limit.
func reportTarget(name, workload string, metric func(result) float64, unit string) target {
	return target{peer: "litequeue", name: name, against: "—", reported: true, eval: func(rs results) (string, bool, bool) {
		a, ok := rs.stat("litequeue", workload, metric)
		if !ok {
			return "no data", false, false
		}
		return fmt.Sprintf("%s %s (no limit)", num(a.med), unit), true, true
	}}
}

// earlier marks a target kept from before "Performance, round three".
func earlier(t target) target {
	t.name = "earlier target: " + t.name
	return t
}

// targets are the targets of "Performance, round three" (issue 33), then
// the earlier targets that still apply. On the server, litequeue is
// compared with River tuned (river-postgres-tuned), whose fetch loop is
// not bound by River's default 100 ms cooldown; enqueue, which the fetch
// settings do not touch, with both River peers.
var targets = []target{
	ratioTarget("litequeue-postgres", "server drain ≥ 1.5× River tuned", "drain", rate, "river-postgres-tuned", "drain", 1.5),
	atMostTarget("litequeue-postgres", "server drain: client CPU per job ≤ River tuned's", "drain", cpuPerJob, "river-postgres-tuned", "drain", 1),
	ratioTarget("litequeue-postgres", "server enqueue16 ≥ 1.5× River", "enqueue16", rate, "river-postgres", "enqueue16", 1.5),
	ratioTarget("litequeue-postgres", "server enqueue16 ≥ 1.5× River tuned", "enqueue16", rate, "river-postgres-tuned", "enqueue16", 1.5),
	atMostTarget("litequeue-postgres", "server latency p50 from the Enqueue call ≤ River tuned's", "latency", p50, "river-postgres-tuned", "latency", 1),
	atMostTarget("litequeue-postgres", "server latency p99 from the Enqueue call ≤ River tuned's", "latency", p99, "river-postgres-tuned", "latency", 1),
	ratioTarget("litequeue", "drain ≥ 60% of bare drain", "drain", rate, "bare", "drain", 0.6),
	ratioTarget("litequeue", "drain ≥ 25× goqite", "drain", rate, "goqite", "drain", 25),
	ratioTarget("litequeue", "drain ≥ 3× asynq without persistence", "drain", rate, "asynq-nopersist", "drain", 3),
	ratioTarget("litequeue", "batch ≥ 2× backlite", "batch", rate, "backlite", "batch", 2),
	ratioTarget("litequeue", "batch ≥ 85% of bare one-transaction insert loop", "batch", rate, "bare", "batch", 0.85),
	ratioTarget("litequeue", "enqueue16 ≥ 90% of the bare group-commit loop", "enqueue16", rate, "bare", "enqueue16", 0.9),
	atMostTarget("litequeue", "idle CPU ≤ backlite's", "idle", idlePer10s, "backlite", "idle", 1),
	maxTarget("pickup p50 ≤ 5 ms (a job of another process)", "pickup", p50, 5, "ms"),
	maxTarget("pickup p99 ≤ 20 ms (a job of another process)", "pickup", p99, 20, "ms"),
	earlier(maxTarget("latency p99 ≤ 5 ms (from the Enqueue call)", "latency", p99, 5, "ms")),
	earlier(ratioTarget("litequeue", "enqueue16 ≥ asynq without persistence", "enqueue16", rate, "asynq-nopersist", "enqueue16", 1)),
	earlier(ratioTarget("litequeue", "growth: drain with 1,000,000 waiting ≥ 90% of the rate with 10,000 (growth1m / growth10k)", "growth1m", rate, "litequeue", "growth10k", 0.9)),
	earlier(maxTarget("peak RSS ≤ 30 MB draining 100,000 jobs (drain100k)", "drain100k", rss, 30, "MB")),
	earlier(atMostTarget("litequeue", "peak RSS flat at 1,000,000 waiting: growth1m's ≤ 1.1× growth10k's", "growth1m", rss, "litequeue", "growth10k", 1.1)),
	earlier(reportTarget("bytes on disk per waiting 100-byte job, 10,000 waiting (growth10k)", "growth10k", diskPerJob, "bytes")),
	earlier(reportTarget("bytes on disk per waiting 100-byte job, 1,000,000 waiting (growth1m)", "growth1m", diskPerJob, "bytes")),
	earlier(ratioTarget("litequeue", "single Enqueue ≥ 90% of bare one-row-per-commit", "enqueue", rate, "bare", "enqueue", 0.9)),
	earlier(ratioTarget("litequeue", "retries ≥ 4× asynq", "retry", rate, "asynq", "retry", 4)),
}

// writeReport writes RESULTS.md from the runs and the machine notes that
// run.sh collected ("key: value" lines).
func writeReport(w io.Writer, rs results, machine string) {
	fmt.Fprintf(w, "# Benchmark results\n\n")
	fmt.Fprintf(w, "Written by `run.sh` (see README.md for what each workload does). Each cell is the median over the runs, with the min–max in brackets; \"—\" means the peer cannot run the workload (reasons below). Each column is a peer run with the settings the table \"Peers\" gives it, as its runs printed them.\n\n")
	fmt.Fprintf(w, "| workload | %s |\n|---|%s\n", strings.Join(peerOrder, " | "), strings.Repeat("---|", len(peerOrder)))
	for _, r := range tableRows {
		cells := make([]string, len(peerOrder))
		for i, p := range peerOrder {
			cells[i] = rs.cell(p, r.workload, r.metric)
		}
		fmt.Fprintf(w, "| %s | %s |\n", r.label, strings.Join(cells, " | "))
	}

	writePeers(w, rs)

	fmt.Fprintf(w, "\n## Targets\n\nEach target compares a litequeue peer's median with a limit or with the median of a peer of the same run, whose settings are in the table \"Peers\".\n\n| peer | target | compared with | medians | met? |\n|---|---|---|---|---|\n")
	for _, t := range targets {
		v, verdict := t.verdict(rs)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", t.peer, t.name, t.against, v, verdict)
	}

	var unsupported, failed []string
	for _, p := range peerOrder {
		for _, wl := range workloadNames() {
			r := rs[[2]string{p, wl}]
			if r == nil {
				continue
			}
			if r.unsupported != "" {
				unsupported = append(unsupported, fmt.Sprintf("- %s, %s: %s", p, wl, r.unsupported))
			}
			for _, f := range r.failed {
				failed = append(failed, fmt.Sprintf("- %s, %s: %s", p, wl, f))
			}
		}
	}
	if len(unsupported) > 0 {
		fmt.Fprintf(w, "\n## Not run (\"—\")\n\n%s\n", strings.Join(unsupported, "\n"))
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "\n## Failed runs\n\nA failed run is one whose check failed (a job ran too often or not at all, or the store kept unfinished jobs), or that errored or timed out.\n\n%s\n", strings.Join(failed, "\n"))
	}
	fmt.Fprintf(w, "\n%s", machine)
}

// writePeers writes the table of the peers and the settings their runs
// printed.
func writePeers(w io.Writer, rs results) {
	fmt.Fprintf(w, "\n## Peers\n\nEvery peer runs 16 workers on the same ~100-byte JSON payloads; the retry workload's policy and the machine's settings are under Settings below.\n\n| peer | settings |\n|---|---|\n")
	for _, p := range peerOrder {
		fmt.Fprintf(w, "| %s | %s |\n", p, strings.ReplaceAll(rs.settings(p), "|", `\|`))
	}
}

// settings returns the settings peer's runs printed, over every workload:
// normally one; more, joined, if the runs of one report disagree.
func (rs results) settings(peer string) string {
	var all []string
	ran := false
	for _, wl := range workloadNames() {
		r := rs[[2]string{peer, wl}]
		if r == nil {
			continue
		}
		ran = true
		for _, s := range r.settings {
			if !slices.Contains(all, s) {
				all = append(all, s)
			}
		}
	}
	switch {
	case !ran:
		return "not run"
	case len(all) == 0:
		return "not recorded (no run of this peer printed its settings)"
	}
	return strings.Join(all, "; and in other runs: ")
}

func runReport(resultsPath, machinePath string) error {
	rs, err := readResults(resultsPath)
	if err != nil {
		return err
	}
	var machine []byte
	if machinePath != "" {
		if machine, err = os.ReadFile(machinePath); err != nil {
			return err
		}
	}
	writeReport(os.Stdout, rs, string(machine))
	return nil
}
