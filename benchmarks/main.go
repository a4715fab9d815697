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
	var (
		peer       = flag.String("peer", "litequeue", "peer: "+strings.Join(peerNames(), ", "))
		workload   = flag.String("workload", "enqueue", "workload: "+strings.Join(workloadNames(), ", "))
		n          = flag.Int("n", 0, "jobs (0: the workload's default)")
		dir        = flag.String("dir", "", "directory for the database file (default: a fresh temp dir, removed after)")
		redisAddr  = flag.String("redis", "", "Redis address for asynq, e.g. 127.0.0.1:6390")
		postgres   = flag.String("postgres", "", "PostgreSQL server DSN for the PostgreSQL peers (default: $"+strings.Join(postgresEnv, ", else $")+"); each run creates and drops a database of its own")
		idleFor    = flag.Duration("idle", 10*time.Second, "idle workload: how long to measure")
		latencyFor = flag.Duration("latency-for", 5*time.Second, "latency workload: how long to enqueue")
		rate       = flag.Int("rate", 200, "latency workload: enqueues per second")
		drain      = flag.Int("drain", defaultGrowthDrain, "growth workloads: how many of the -n waiting jobs to drain (timed)")
		timeout    = flag.Duration("timeout", 5*time.Minute, "fail if the workload has not finished by then")
		cpuprofile = flag.String("cpuprofile", "", "write a CPU profile of the timed phase to this file")
		produceN   = flag.Int("produce", 0, "pickup workload: be the producer process and enqueue this many jobs on the store in -dir (run.sh does not use it: pickup runs it)")
		profileHz  = flag.Int("profile-hz", 100, "samples per second of -cpuprofile (more for an idle phase, which uses little CPU)")
		report     = flag.String("report", "", "report mode: read this file of result lines and write RESULTS.md to stdout")
		machine    = flag.String("machine", "", "report mode: a Markdown file appended to the report (machine, settings)")
	)
	flag.Parse()

	if *report != "" {
		if err := runReport(*report, *machine); err != nil {
			fatalf("report: %v", err)
		}
		return
	}

	p, ok := peers[*peer]
	if !ok {
		fatalf("unknown peer %q (want one of %s)", *peer, strings.Join(peerNames(), ", "))
	}
	for _, env := range postgresEnv {
		if *postgres == "" {
			*postgres = os.Getenv(env)
		}
	}
	w, ok := workloads[*workload]
	if !ok {
		fatalf("unknown workload %q (want one of %s)", *workload, strings.Join(workloadNames(), ", "))
	}
	if *n == 0 {
		*n = w.jobs
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "lqbench-")
		if err != nil {
			fatalf("temp dir: %v", err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	cfg := config{
		peer:       *peer,
		workload:   *workload,
		dir:        *dir,
		path:       filepath.Join(*dir, "queue.db"),
		jobs:       *n,
		redisAddr:  *redisAddr,
		postgres:   *postgres,
		idleFor:    *idleFor,
		latencyFor: *latencyFor,
		rate:       *rate,
		drain:      *drain,
		cpuprofile: *cpuprofile,
		profileHz:  *profileHz,
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	if *produceN > 0 {
		err := produce(ctx, p.open, cfg, *produceN)
		cancel()
		if err != nil {
			fatalf("%s producer: %v", *peer, err)
		}
		return
	}
	res, err := runWorkload(ctx, p.open, w, cfg)
	cancel()
	res.Peer, res.Workload, res.Settings = *peer, *workload, p.settings
	if errors.Is(err, errUnsupported) {
		res.Unsupported = strings.TrimPrefix(err.Error(), errUnsupported.Error()+": ")
		err = nil
	}
	if err != nil {
		// Fail loudly: run.sh stops on a non-zero exit.
		fatalf("%s %s: %v", *peer, *workload, err)
	}
	cpu, rss := rusage()
	res.ProcCPUms = round(cpu.Seconds()*1000, 1)
	if res.MaxRSSMB == 0 { // a growth run records it before its check
		res.MaxRSSMB = round(rss, 1)
	}
	line, _ := json.Marshal(res)
	fmt.Println(string(line))
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
