package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// errUnsupported is returned, wrapped with the reason, by a peer that cannot
// run a workload; the run prints it and run.sh shows "—".
var errUnsupported = errors.New("unsupported")

// errRetry is what handlers return on the runs that must fail.
var errRetry = errors.New("benchmark: fail this attempt")

// config is what a peer is opened with: one workload, one fresh directory.
type config struct {
	peer       string
	workload   string
	dir        string
	path       string // the SQLite file, for the SQLite peers
	jobs       int
	redisAddr  string
	postgres   string // the PostgreSQL server's DSN, for the PostgreSQL peers
	idleFor    time.Duration
	latencyFor time.Duration
	rate       int
	drain      int // growth workloads: how many of the waiting jobs the timed phase drains
	cpuprofile string
	profileHz  int
	producer   bool // the pickup workload's producer: the store exists, only enqueue
}

// retry reports whether jobs must fail twice before they succeed.
func (c config) retry() bool { return c.workload == "retry" }

// Retry workload: each job fails retryFailures times, then succeeds, and
// waits retryDelay (no jitter) before each retry.
const (
	retryFailures = 2
	retryDelay    = 10 * time.Millisecond
	retryTries    = retryFailures + 1
)

// system is one peer opened for one workload. The peer's handler calls
// tracker.run(seq) with the job's sequence number, decoded from its payload,
// and returns what it returns.
type system interface {
	// enqueue adds the job with sequence number seq. It may be called from
	// several goroutines at once.
	enqueue(ctx context.Context, seq int) error
	// enqueueBatch adds the jobs in one call (one transaction where the
	// peer has them), or returns errUnsupported.
	enqueueBatch(ctx context.Context, seqs []int) error
	// start starts the peer's workers: 16 at once.
	start(ctx context.Context) error
	// stop stops the workers, waiting for running handlers and for their
	// outcomes to be stored.
	stop() error
	// unfinished counts the jobs the store does not yet hold as finished.
	unfinished(ctx context.Context) (int, error)
	// stored reads back the sequence numbers of the jobs waiting in the
	// store, from their payloads.
	stored(ctx context.Context) ([]int, error)
	close() error
}

// opener opens a peer on a fresh store for one workload.
type opener func(ctx context.Context, cfg config, t *tracker) (system, error)

// jobArgs is every job's payload: about 100 bytes of JSON.
type jobArgs struct {
	Seq        int    `json:"seq"`
	UserID     int    `json:"user_id"`
	Email      string `json:"email"`
	Template   string `json:"template"`
	Locale     string `json:"locale"`
	EnqueuedAt int64  `json:"enqueued_at,omitempty"` // pickup: the wall clock (Unix ns) at the enqueue call
}

// stampPayloads makes newArgs stamp each payload with the wall clock. The
// pickup workload's producer process sets it once, before it opens its peer.
var stampPayloads bool

func newArgs(seq int) jobArgs {
	a := jobArgs{Seq: seq, UserID: 100000 + seq, Email: "someone@example.com", Template: "welcome", Locale: "en-GB"}
	if stampPayloads {
		a.EnqueuedAt = time.Now().UnixNano()
	}
	return a
}

// tracker counts the handler runs of every job, so that a run can prove
// that each job ran exactly as often as it should, and records latencies.
type tracker struct {
	n         int   // jobs: sequence numbers 0…n-1
	want      int32 // runs per job: 1, or retryTries in the retry workload
	counts    []atomic.Int32
	remaining atomic.Int64 // jobs that have not yet had their last run
	done      chan struct{}

	// ran replaces counts in the growth workloads, where only a few of
	// many waiting jobs run: runs per job, for the jobs that ran, so that
	// the tracker's memory does not grow with the jobs left waiting.
	mu  sync.Mutex
	ran map[int]int32

	t0       time.Time      // monotonic base of the offsets below
	enqueued []atomic.Int64 // latency: ns after t0 when Enqueue was called
	returned []atomic.Int64 // latency: ns after t0 when Enqueue returned
	started  []atomic.Int64 // latency: ns after t0 when the handler first started
	pickedUp []atomic.Int64 // pickup: ns from the enqueue call (in the payload) to the first start
}

func newTracker(n int, want int32) *tracker {
	t := &tracker{n: n, want: want, counts: make([]atomic.Int32, n), done: make(chan struct{}), t0: time.Now()}
	t.remaining.Store(int64(n))
	if n == 0 {
		close(t.done)
	}
	return t
}

// newPartialTracker tracks n jobs of which only the first drain to run
// are waited for (growth workloads): each runs once, and the jobs are
// counted in a map of those that ran.
func newPartialTracker(n, drain int) *tracker {
	t := &tracker{n: n, want: 1, ran: map[int]int32{}, done: make(chan struct{}), t0: time.Now()}
	t.remaining.Store(int64(drain))
	if drain == 0 {
		close(t.done)
	}
	return t
}

// trackLatency makes the tracker record enqueue and start times.
func (t *tracker) trackLatency() {
	t.enqueued = make([]atomic.Int64, t.n)
	t.returned = make([]atomic.Int64, t.n)
	t.started = make([]atomic.Int64, t.n)
}

// trackPickup makes the tracker record, from the payloads' stamps, the
// time from each enqueue call to its handler's first start.
func (t *tracker) trackPickup() {
	t.pickedUp = make([]atomic.Int64, t.n)
}

// markEnqueue records that job seq is about to be enqueued.
func (t *tracker) markEnqueue(seq int) {
	t.enqueued[seq].Store(int64(time.Since(t.t0)))
}

// markReturn records that the Enqueue call of job seq returned.
func (t *tracker) markReturn(seq int) {
	t.returned[seq].Store(int64(time.Since(t.t0)))
}

// run is called by every handler run of a job, with its payload: it fails
// the runs that must fail and counts them all.
func (t *tracker) run(args jobArgs) error {
	seq := args.Seq
	if seq < 0 || seq >= t.n {
		return fmt.Errorf("benchmark: unknown job %d", seq)
	}
	c := t.count(seq)
	if c == 1 && t.started != nil {
		t.started[seq].Store(int64(time.Since(t.t0)))
	}
	if c == 1 && t.pickedUp != nil {
		t.pickedUp[seq].Store(time.Now().UnixNano() - args.EnqueuedAt)
	}
	if c < t.want {
		return errRetry
	}
	if c == t.want && t.remaining.Add(-1) == 0 {
		close(t.done)
	}
	return nil
}

// count adds one to job seq's runs and returns them.
func (t *tracker) count(seq int) int32 {
	if t.ran == nil {
		return t.counts[seq].Add(1)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ran[seq]++
	return t.ran[seq]
}

// wait waits until every job has had its last run.
func (t *tracker) wait(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("timed out with %d jobs not done (of %d)", t.remaining.Load(), t.n)
	}
}

// check returns an error unless every job ran exactly want times.
func (t *tracker) check() error {
	var bad []string
	for i := range t.counts {
		if c := t.counts[i].Load(); c != t.want {
			bad = append(bad, fmt.Sprintf("job %d ran %d times", i, c))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("… %d jobs in all", len(bad)))
		}
		return fmt.Errorf("want each job to run exactly %d times: %v", t.want, bad)
	}
	return nil
}

// latencies returns the p50 and p99, in ms, from the moment each job's
// mark (the Enqueue call, or its return) to its handler's first start. A
// handler can start before its Enqueue returns (the job is claimed while
// the call is on its way back): from the return, it counts as 0 ms, so
// that every job gives one sample and none is negative.
func (t *tracker) latencies(mark []atomic.Int64) (p50, p99 float64) {
	d := make([]float64, t.n)
	for i := range d {
		d[i] = float64(max(0, t.started[i].Load()-mark[i].Load())) / 1e6
	}
	return percentiles(d)
}

// startedBefore returns the share of jobs, in percent, whose handler
// started before their mark.
func (t *tracker) startedBefore(mark []atomic.Int64) float64 {
	if t.n == 0 {
		return 0
	}
	n := 0
	for i := range t.n {
		if t.started[i].Load() < mark[i].Load() {
			n++
		}
	}
	return round(100*float64(n)/float64(t.n), 1)
}

// pickups returns the p50 and p99, in ms, of the time from each job's
// enqueue call, in the producer process, to its handler's first start.
func (t *tracker) pickups() (p50, p99 float64) {
	d := make([]float64, len(t.pickedUp))
	for i := range d {
		d[i] = float64(t.pickedUp[i].Load()) / 1e6
	}
	return percentiles(d)
}

// percentiles sorts d and returns its p50 and p99, rounded to µs.
func percentiles(d []float64) (p50, p99 float64) {
	if len(d) == 0 {
		return 0, 0
	}
	sort.Float64s(d)
	q := func(p float64) float64 { return d[min(len(d)-1, int(p*float64(len(d))))] }
	return round(q(0.50), 3), round(q(0.99), 3)
}

// workload is one of the measured scenarios.
type workload struct {
	jobs int // default job count
	run  func(ctx context.Context, open opener, cfg config) (result, error)
}

var workloads = map[string]workload{
	"enqueue":   {2000, runEnqueue},
	"enqueue16": {4000, runEnqueue16},
	"batch":     {20000, runBatch},
	"drain":     {3000, runDrain},
	"drain100k": {100000, runDrain},
	"growth10k": {10000, runGrowth},   // waiting; -drain of them timed
	"growth1m":  {1000000, runGrowth}, // waiting; -drain of them timed
	"latency":   {0, runLatency},      // rate × duration
	"retry":     {500, runDrain},
	"idle":      {workers, runIdle},
	"pickup":    {0, runPickup}, // rate × duration
}

func runWorkload(ctx context.Context, open opener, w workload, cfg config) (result, error) {
	return w.run(ctx, open, cfg)
}

// session is a peer opened with its tracker.
type session struct {
	sys     system
	t       *tracker
	started bool
}

func openSession(ctx context.Context, open opener, cfg config, n int) (*session, error) {
	want := int32(1)
	if cfg.retry() {
		want = retryTries
	}
	t := newTracker(n, want)
	sys, err := open(ctx, cfg, t)
	if err != nil {
		return nil, err
	}
	return &session{sys: sys, t: t}, nil
}

func (s *session) start(ctx context.Context) error {
	s.started = true
	return s.sys.start(ctx)
}

// finish runs the jobs not yet run (starting the workers if need be),
// stops the workers, closes the peer and checks that every job ran exactly
// as often as it should and that the store holds every job as finished.
func (s *session) finish(ctx context.Context) (string, error) {
	if !s.started {
		if err := s.start(ctx); err != nil {
			s.sys.close()
			return "", fmt.Errorf("start workers: %w", err)
		}
	}
	waitErr := s.t.wait(ctx)
	// Stopping waits for the running handlers, so that a job run twice by
	// mistake is counted before the check.
	stopErr := s.sys.stop()
	var left int
	var leftErr error
	if waitErr == nil && stopErr == nil {
		left, leftErr = s.sys.unfinished(context.WithoutCancel(ctx))
	}
	closeErr := s.sys.close()
	if err := errors.Join(waitErr, stopErr, leftErr, closeErr); err != nil {
		return "", err
	}
	if err := s.t.check(); err != nil {
		return "", err
	}
	if left != 0 {
		return "", fmt.Errorf("%d jobs are not finished in the store after every handler ran", left)
	}
	return fmt.Sprintf("%d jobs ran exactly %d time(s) each; store: 0 unfinished", s.t.n, s.t.want), nil
}

func (s *session) abort() {
	if s.started {
		s.sys.stop()
	}
	s.sys.close()
}

// fill enqueues jobs 0…n-1, in batches of 1,000 where the peer has batches.
func (s *session) fill(ctx context.Context, n int) error {
	for lo := 0; lo < n; lo += 1000 {
		err := s.sys.enqueueBatch(ctx, seqRange(lo, min(n, lo+1000)))
		if errors.Is(err, errUnsupported) {
			return s.enqueueConcurrently(ctx, lo, n)
		}
		if err != nil {
			return fmt.Errorf("fill: %w", err)
		}
	}
	return nil
}

// enqueueConcurrently enqueues jobs lo…n-1 from 16 goroutines.
func (s *session) enqueueConcurrently(ctx context.Context, lo, n int) error {
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for g := range workers {
		wg.Go(func() {
			for seq := lo + g; seq < n; seq += workers {
				if err := s.sys.enqueue(ctx, seq); err != nil {
					errs[g] = fmt.Errorf("enqueue %d: %w", seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func seqRange(lo, hi int) []int {
	s := make([]int, hi-lo)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

// runEnqueue: one producer, n sequential enqueues.
func runEnqueue(ctx context.Context, open opener, cfg config) (result, error) {
	return measureEnqueue(ctx, open, cfg, func(s *session) error {
		for seq := range cfg.jobs {
			if err := s.sys.enqueue(ctx, seq); err != nil {
				return fmt.Errorf("enqueue %d: %w", seq, err)
			}
		}
		return nil
	})
}

// runEnqueue16: 16 producers enqueueing at once.
func runEnqueue16(ctx context.Context, open opener, cfg config) (result, error) {
	return measureEnqueue(ctx, open, cfg, func(s *session) error {
		return s.enqueueConcurrently(ctx, 0, cfg.jobs)
	})
}

// runBatch: batches of 1,000 jobs per call.
func runBatch(ctx context.Context, open opener, cfg config) (result, error) {
	return measureEnqueue(ctx, open, cfg, func(s *session) error {
		for lo := 0; lo < cfg.jobs; lo += 1000 {
			if err := s.sys.enqueueBatch(ctx, seqRange(lo, min(cfg.jobs, lo+1000))); err != nil {
				return err
			}
		}
		return nil
	})
}

// measureEnqueue times enq, then reads the payloads back from the store
// (untimed) to check that each job is stored exactly once. (Running them
// would measure the peer's drain again, at length: see the drain workload.)
func measureEnqueue(ctx context.Context, open opener, cfg config, enq func(*session) error) (result, error) {
	var res result
	s, err := openSession(ctx, open, cfg, cfg.jobs)
	if err != nil {
		return res, err
	}
	defer s.sys.close()
	p, err := startPhase(cfg)
	if err != nil {
		return res, err
	}
	err = enq(s)
	p.stop(&res, cfg.jobs)
	if err != nil {
		return res, err
	}
	seqs, err := s.sys.stored(ctx)
	if err != nil {
		return res, fmt.Errorf("read back: %w", err)
	}
	if err := checkStored(seqs, cfg.jobs); err != nil {
		return res, err
	}
	res.Verified = fmt.Sprintf("%d jobs stored exactly once each (read back from the store)", cfg.jobs)
	return res, nil
}

// checkStored returns an error unless seqs holds 0…n-1 exactly once each.
func checkStored(seqs []int, n int) error {
	seen := make([]int, n)
	var bad []string
	for _, seq := range seqs {
		if seq < 0 || seq >= n {
			bad = append(bad, fmt.Sprintf("unknown job %d", seq))
			continue
		}
		seen[seq]++
	}
	for seq, c := range seen {
		if c != 1 {
			bad = append(bad, fmt.Sprintf("job %d stored %d times", seq, c))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("… %d problems in all", len(bad)))
		}
		return fmt.Errorf("want each job stored exactly once (%d rows read): %v", len(seqs), bad)
	}
	return nil
}

// seqsOf decodes the sequence numbers of JSON payloads.
func seqsOf(payloads [][]byte) ([]int, error) {
	seqs := make([]int, len(payloads))
	for i, p := range payloads {
		var args jobArgs
		if err := json.Unmarshal(p, &args); err != nil {
			return nil, fmt.Errorf("payload %q: %w", p, err)
		}
		seqs[i] = args.Seq
	}
	return seqs, nil
}

// runDrain: n jobs enqueued before the clock starts; the time until every
// job has had its last handler run, with 16 workers. Used by drain,
// drain100k and retry (where each job fails twice first).
func runDrain(ctx context.Context, open opener, cfg config) (result, error) {
	var res result
	if cfg.workload == "drain100k" && cfg.peer != "litequeue" {
		return res, fmt.Errorf("%w: drain100k runs for litequeue only (its RSS target)", errUnsupported)
	}
	s, err := openSession(ctx, open, cfg, cfg.jobs)
	if err != nil {
		return res, err
	}
	if err := s.fill(ctx, cfg.jobs); err != nil {
		s.abort()
		return res, err
	}
	if err := s.timedDrain(ctx, cfg, &res, cfg.jobs); err != nil {
		return res, err
	}
	res.Verified, err = s.finish(ctx)
	return res, err
}

// timedDrain starts the measured phase and the workers, and waits until
// the tracker has seen the n jobs it waits for run; it aborts the session
// on failure.
func (s *session) timedDrain(ctx context.Context, cfg config, res *result, n int) error {
	p, err := startPhase(cfg)
	if err != nil {
		s.abort()
		return err
	}
	if err := s.start(ctx); err != nil {
		s.abort()
		return fmt.Errorf("start workers: %w", err)
	}
	err = s.t.wait(ctx)
	p.stop(res, n)
	if err != nil {
		s.abort()
	}
	return err
}

// startPaced opens a session for the n jobs of a paced workload, sets its
// tracker to record them (track), starts the workers, lets them settle into
// waiting, and starts the measured phase.
func startPaced(ctx context.Context, open opener, cfg config, n int, track func(*tracker)) (*session, *phase, error) {
	s, err := openSession(ctx, open, cfg, n)
	if err != nil {
		return nil, nil, err
	}
	track(s.t)
	if err := s.start(ctx); err != nil {
		s.abort()
		return nil, nil, fmt.Errorf("start workers: %w", err)
	}
	time.Sleep(500 * time.Millisecond) // let the workers settle into waiting
	p, err := startPhase(cfg)
	if err != nil {
		s.abort()
		return nil, nil, err
	}
	return s, p, nil
}

// runLatency: workers running; jobs enqueued at a steady rate, each from
// its own goroutine (an open loop: a slow enqueue does not delay the next);
// latency is from the Enqueue call to the handler's start.
func runLatency(ctx context.Context, open opener, cfg config) (result, error) {
	var res result
	n := int(float64(cfg.rate) * cfg.latencyFor.Seconds())
	s, p, err := startPaced(ctx, open, cfg, n, (*tracker).trackLatency)
	if err != nil {
		return res, err
	}
	interval := time.Second / time.Duration(cfg.rate)
	var wg sync.WaitGroup
	errs := make([]error, n)
	begin := time.Now()
	for seq := range n {
		if d := time.Until(begin.Add(time.Duration(seq) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			s.t.markEnqueue(seq)
			errs[seq] = s.sys.enqueue(ctx, seq)
			s.t.markReturn(seq)
		})
	}
	wg.Wait()
	err = errors.Join(errors.Join(errs...), s.t.wait(ctx))
	p.stop(&res, n)
	res.CPUusPerJob = 0 // CPU over the paced period, not per job
	if err != nil {
		s.abort()
		return res, err
	}
	res.P50ms, res.P99ms = s.t.latencies(s.t.enqueued)
	res.AfterP50ms, res.AfterP99ms = s.t.latencies(s.t.returned)
	res.BeforeReturnPct = s.t.startedBefore(s.t.returned)
	res.Verified, err = s.finish(ctx)
	return res, err
}

// pace calls enq(seq) for seq 0…n-1 at rate a second, each from its own
// goroutine (an open loop: a slow enqueue does not delay the next), and
// waits for them all.
func pace(n, rate int, enq func(seq int) error) error {
	interval := time.Second / time.Duration(rate)
	var wg sync.WaitGroup
	errs := make([]error, n)
	begin := time.Now()
	for seq := range n {
		if d := time.Until(begin.Add(time.Duration(seq) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() { errs[seq] = enq(seq) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runIdle: 16 idle workers, CPU measured over idleFor after a second to
// settle; then 16 jobs, to show the workers were alive.
func runIdle(ctx context.Context, open opener, cfg config) (result, error) {
	var res result
	s, err := openSession(ctx, open, cfg, cfg.jobs)
	if err != nil {
		return res, err
	}
	if err := s.start(ctx); err != nil {
		s.abort()
		return res, fmt.Errorf("start workers: %w", err)
	}
	time.Sleep(time.Second)
	p, err := startPhase(cfg)
	if err != nil {
		s.abort()
		return res, err
	}
	time.Sleep(cfg.idleFor)
	p.stop(&res, 0)
	res.Seconds = round(cfg.idleFor.Seconds(), 3)
	if err := s.enqueueConcurrently(ctx, 0, cfg.jobs); err != nil {
		s.abort()
		return res, err
	}
	res.Verified, err = s.finish(ctx)
	return res, err
}
