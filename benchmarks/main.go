// Command benchmarks runs one workload on one job queue and prints one JSON
// line of results. Each invocation is its own process, so that the CPU time
// and the peak RSS it reports (getrusage at the end) belong to that one
// (peer, workload) pair. run.sh runs every pair several times and writes
// RESULTS.md; see README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"
)

// workers is the concurrency every peer's worker pool runs with.
const workers = 16

// peerSpec is one of the job queues measured: how to open it, and how it is
// set up beyond what every peer shares (16 workers, the payload, the
// workload's retry policy). Each result line carries the settings, and
// RESULTS.md shows them beside the peer's name.
type peerSpec struct {
	open     opener
	settings string
}

// peers maps a peer's name to the peer.
var peers = map[string]peerSpec{
	"litequeue":            {openLitequeue, "the file, litequeue's default Options (WAL, synchronous=FULL); wakes on in-process enqueues"},
	"goqite":               {openGoqite, "jobs.Runner, PollInterval 100ms (goqite's default); one connection"},
	"river":                riverPeer(riverDefaults),
	"river-tuned":          riverPeer(riverTuned),
	"litequeue-postgres":   {openLitequeuePostgres, "postgres.Open, database/sql's default pool, litequeue's default Options"},
	"river-postgres":       riverPostgresPeer(riverDefaults),
	"river-postgres-tuned": riverPostgresPeer(riverTuned),
	"backlite":             {openBacklite, "backlite's defaults, ReleaseAfter 10m; one connection"},
	"asynq":                {openAsynq, "Redis with an append-only file (appendfsync: see Settings); TaskCheckInterval 1s (asynq's default)"},
	"asynq-nopersist":      {openAsynq, "Redis without persistence (no AOF, no RDB): run.sh gives it one; TaskCheckInterval 1s (asynq's default)"},
	"bare":                 {openBare, "loops over database/sql, no queue: see README"},
}

// result is the one JSON line a run prints.
type result struct {
	Peer        string  `json:"peer"`
	Workload    string  `json:"workload"`
	Unsupported string  `json:"unsupported,omitempty"` // why the peer cannot run the workload
	Jobs        int     `json:"jobs,omitempty"`
	Seconds     float64 `json:"seconds,omitempty"`    // the timed phase
	JobsPerSec  float64 `json:"jobs_per_s,omitempty"` // Jobs / Seconds
	PhaseCPUms  float64 `json:"phase_cpu_ms"`         // user+sys CPU of the timed phase
	CPUusPerJob float64 `json:"cpu_us_per_job,omitempty"`
	P50ms       float64 `json:"p50_ms,omitempty"` // latency: Enqueue call → handler start
	P99ms       float64 `json:"p99_ms,omitempty"`
	AfterP50ms  float64 `json:"after_p50_ms,omitempty"` // latency: Enqueue return → handler start, 0 if it started before
	AfterP99ms  float64 `json:"after_p99_ms,omitempty"`
	// latency: the share of handlers that started before their Enqueue
	// returned, in percent; each counts 0 ms from the return.
	BeforeReturnPct float64 `json:"before_return_pct,omitempty"`
	ProcCPUms       float64 `json:"proc_cpu_ms"`                  // user+sys CPU of the whole process
	MaxRSSMB        float64 `json:"max_rss_mb"`                   // peak RSS of the whole process (growth: up to the end of the drain, before the check)
	Waiting         int     `json:"waiting,omitempty"`            // growth: jobs waiting in the store when the drain starts
	DiskBytes       int64   `json:"disk_bytes,omitempty"`         // growth: the file + -wal + -shm, after the fill, before the drain
	DiskPerJob      float64 `json:"disk_bytes_per_job,omitempty"` // growth: DiskBytes / Waiting
	Verified        string  `json:"verified"`                     // what was checked after the run
	Settings        string  `json:"settings,omitempty"`           // how the peer was set up (peerSpec.settings)
}

func main() {
	cfg, run := parseFlags()
	if run.report != "" {
		if err := runReport(run.report, run.machine); err != nil {
			fatalf("report: %v", err)
		}
		return
	}
	p, ok := peers[cfg.peer]
	if !ok {
		fatalf("unknown peer %q (want one of %s)", cfg.peer, strings.Join(peerNames(), ", "))
	}
	w, ok := workloads[cfg.workload]
	if !ok {
		fatalf("unknown workload %q (want one of %s)", cfg.workload, strings.Join(workloadNames(), ", "))
	}
	if cfg.jobs == 0 {
		cfg.jobs = w.jobs
	}
	if cfg.dir == "" {
		d, err := os.MkdirTemp("", "lqbench-")
		if err != nil {
			fatalf("temp dir: %v", err)
		}
		defer os.RemoveAll(d)
		cfg.dir = d
	}
	cfg.path = filepath.Join(cfg.dir, "queue.db")
	ctx, cancel := context.WithTimeout(context.Background(), run.timeout)
	defer cancel()
	if run.produce > 0 {
		if err := produce(ctx, p.open, cfg, run.produce); err != nil {
			fatalf("%s producer: %v", cfg.peer, err)
		}
		return
	}
	line, _ := json.Marshal(measure(ctx, p, w, cfg))
	fmt.Println(string(line))
}

// runFlags are the flags that choose what main does, beside the
// workload's config.
type runFlags struct {
	timeout         time.Duration
	produce         int
	report, machine string
}

// parseFlags parses the command line.
func parseFlags() (config, runFlags) {
	var cfg config
	var run runFlags
	flag.StringVar(&cfg.peer, "peer", "litequeue", "peer: "+strings.Join(peerNames(), ", "))
	flag.StringVar(&cfg.workload, "workload", "enqueue", "workload: "+strings.Join(workloadNames(), ", "))
	flag.IntVar(&cfg.jobs, "n", 0, "jobs (0: the workload's default)")
	flag.StringVar(&cfg.dir, "dir", "", "directory for the database file (default: a fresh temp dir, removed after)")
	flag.StringVar(&cfg.redisAddr, "redis", "", "Redis address for asynq, e.g. 127.0.0.1:6390")
	flag.StringVar(&cfg.postgres, "postgres", "", "PostgreSQL server DSN for the PostgreSQL peers (default: $"+strings.Join(postgresEnv, ", else $")+"); each run creates and drops a database of its own")
	flag.DurationVar(&cfg.idleFor, "idle", 10*time.Second, "idle workload: how long to measure")
	flag.DurationVar(&cfg.latencyFor, "latency-for", 5*time.Second, "latency workload: how long to enqueue")
	flag.IntVar(&cfg.rate, "rate", 200, "latency workload: enqueues per second")
	flag.IntVar(&cfg.drain, "drain", defaultGrowthDrain, "growth workloads: how many of the -n waiting jobs to drain (timed)")
	flag.DurationVar(&run.timeout, "timeout", 5*time.Minute, "fail if the workload has not finished by then")
	flag.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of the timed phase to this file")
	flag.IntVar(&run.produce, "produce", 0, "pickup workload: be the producer process and enqueue this many jobs on the store in -dir (run.sh does not use it: pickup runs it)")
	flag.IntVar(&cfg.profileHz, "profile-hz", 100, "samples per second of -cpuprofile (more for an idle phase, which uses little CPU)")
	flag.StringVar(&run.report, "report", "", "report mode: read this file of result lines and write RESULTS.md to stdout")
	flag.StringVar(&run.machine, "machine", "", "report mode: a Markdown file appended to the report (machine, settings)")
	flag.Parse()
	for _, env := range postgresEnv {
		if cfg.postgres == "" {
			cfg.postgres = os.Getenv(env)
		}
	}
	return cfg, run
}

// measure runs the workload w of peer p and returns its result, with the
// process's CPU and peak RSS; it exits on a failure (run.sh stops on a
// non-zero exit).
func measure(ctx context.Context, p peerSpec, w workload, cfg config) result {
	res, err := runWorkload(ctx, p.open, w, cfg)
	res.Peer, res.Workload, res.Settings = cfg.peer, cfg.workload, p.settings
	if errors.Is(err, errUnsupported) {
		res.Unsupported = strings.TrimPrefix(err.Error(), errUnsupported.Error()+": ")
		err = nil
	}
	if err != nil {
		fatalf("%s %s: %v", cfg.peer, cfg.workload, err)
	}
	cpu, rss := rusage()
	res.ProcCPUms = round(cpu.Seconds()*1000, 1)
	if res.MaxRSSMB == 0 { // a growth run records it before its check
		res.MaxRSSMB = round(rss, 1)
	}
	return res
}

// rusage returns the user+sys CPU time and the peak RSS (MB) of this process.
func rusage() (time.Duration, float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fatalf("getrusage: %v", err)
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu, float64(ru.Maxrss) / 1024 // Linux: Maxrss is in KiB
}

// phase measures the wall and CPU time of a workload's timed phase, and
// profiles it when asked.
type phase struct {
	start   time.Time
	cpu     time.Duration
	profile *os.File
}

func startPhase(cfg config) (*phase, error) {
	p := &phase{}
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return nil, err
		}
		if cfg.profileHz != 100 {
			// Set before StartCPUProfile, whose own setting of 100 Hz
			// then fails with a warning on stderr and leaves this one.
			runtime.SetCPUProfileRate(cfg.profileHz)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		p.profile = f
	}
	p.cpu, _ = rusage()
	p.start = time.Now()
	return p, nil
}

// stop ends the phase and fills in the result's timing fields for n jobs.
func (p *phase) stop(res *result, n int) {
	elapsed := time.Since(p.start)
	cpu, _ := rusage()
	if p.profile != nil {
		pprof.StopCPUProfile()
		p.profile.Close()
	}
	used := cpu - p.cpu
	res.Jobs = n
	res.Seconds = round(elapsed.Seconds(), 4)
	res.PhaseCPUms = round(used.Seconds()*1000, 2)
	if n > 0 {
		res.JobsPerSec = round(float64(n)/elapsed.Seconds(), 1)
		res.CPUusPerJob = round(float64(used.Microseconds())/float64(n), 2)
	}
}

func round(x float64, places int) float64 {
	p := 1.0
	for range places {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}

func peerNames() []string {
	var names []string
	for k := range peers {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func workloadNames() []string {
	var names []string
	for k := range workloads {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "benchmarks: "+format+"\n", args...)
	os.Exit(1)
}
