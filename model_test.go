package litequeue_test

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"github.com/litequeue/litequeue"
)

// TestQueue_Operations checks random sequences of operations — enqueue
// (delayed or not, with a unique key, with MaxTries), RunDue with an
// outcome chosen per run (succeed, fail, snooze, permanent, discard),
// replay, cancel, a worker of another process that claims a job and hangs
// and later returns, clock steps, and closing and reopening the file —
// against a small model of the queue, after every step: no job lost or
// made up, each in the one state the model says, tries ≤ MaxTries, the
// runs in priority/RunAt/ID order, one history row per run and replay, one
// job.dead per death, no running job but the hung one, Stats adding up.
//
// rapid's flags set the size: -rapid.checks (default 100 sequences, 10
// under the race detector) and -rapid.steps (default 30 on average).
func TestQueue_Operations(t *testing.T) {
	if race && !checksGiven() {
		// The race detector slows SQLite about fifteen times.
		defer setFlag(t, "rapid.checks", "10")()
	}
	rapid.Check(t, checkOperations)
}

// FuzzOperations is TestQueue_Operations driven by the fuzzer's bytes:
// rapid draws every choice from them.
func FuzzOperations(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("enqueue, run, hang, wait, run, return, replay"))
	f.Fuzz(rapid.MakeFuzz(checkOperations))
}

func checkOperations(t *rapid.T) {
	m := newOpsModel(t)
	t.Repeat(map[string]func(*rapid.T){
		"enqueue": m.enqueue,
		"runDue":  m.runDue,
		"replay":  m.replay,
		"cancel":  m.cancel,
		"advance": m.advance,
		"reopen":  m.reopen,
		"hang":    m.hang,
		"return":  m.returnHung,
		"":        m.check,
	})
}

// checksGiven reports whether -rapid.checks was given on the command line.
// It looks once, before setFlag marks the flag as set.
var checksGiven = sync.OnceValue(func() bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	return given
})

// setFlag sets a flag and returns a function that restores it.
func setFlag(t *testing.T, name, value string) func() {
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	return func() { flag.Set(name, old) }
}

// The model's settings: retries 10s apart, 3 tries; finished jobs kept an
// hour, dead ones two, so that retention happens within a sequence.
var (
	opsPolicy  = litequeue.Policy{Backoff: litequeue.Constant, Base: 10 * time.Second, Ceiling: time.Minute, MaxTries: 3, Jitter: litequeue.NoJitter}
	opsKeep    = time.Hour
	opsDeadTTL = 2 * time.Hour
)

const (
	retryWait = 10 * time.Second
	snoozeFor = time.Minute
)

// runPlans are the outcomes a run of kind "k" may have, chosen by the test per run.
var runPlans = []string{"succeed", "fail", "snooze", "permanent", "discard"}

// modelJob is what the model knows of a job.
type modelJob struct {
	id        int64
	kind      string
	key       string
	priority  int
	state     litequeue.State
	attempt   int
	maxTries  int
	runAt     time.Time // when pending
	finished  time.Time // when terminal
	history   int       // rows: one per run, rescue and replay
	deaths    int
	cancelReq bool // Cancel asked the (hung) running job to stop
}

// hungRun is the run of another process's worker that claimed a job and
// hangs until the test lets it return.
type hungRun struct {
	id      int64
	at      time.Time
	release chan struct{}
	cancel  context.CancelFunc
	done    chan runResult
}

// opsModel is one sequence's queue, file and model.
type opsModel struct {
	dir, path string
	clk       *clock.Mock
	q         *litequeue.Queue
	jobs      map[int64]*modelJob
	ids       []int64 // every ID seen, for picking; purged ones included

	mu     sync.Mutex // guards what handlers and OnEvent touch
	plan   map[int64]string
	ran    []int64
	deaths map[int64]int
	errs   []string

	// The other process: its own clock, which stays where it was when its
	// worker hung (it never renews the lease).
	clk2    *clock.Mock
	q2      *litequeue.Queue
	started chan int64
	release chan struct{} // the hung run's, for its handler; under mu
	hung    *hungRun
}

func newOpsModel(t *rapid.T) *opsModel {
	dir, err := os.MkdirTemp("", "litequeue-ops")
	if err != nil {
		t.Fatal(err)
	}
	m := &opsModel{
		dir:    dir,
		path:   filepath.Join(dir, "q.db"),
		clk:    newMock(),
		jobs:   map[int64]*modelJob{},
		plan:   map[int64]string{},
		deaths: map[int64]int{},
	}
	t.Cleanup(m.close)
	m.open(t)
	return m
}

func (m *opsModel) options() litequeue.Options {
	return litequeue.Options{
		Clock: m.clk, Retry: opsPolicy, KeepFinished: opsKeep, DeadTTL: opsDeadTTL,
		Synchronous: "normal", OnEvent: m.event,
	}
}

func (m *opsModel) open(t *rapid.T) {
	q, err := openBackend(t, m.path, m.options())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	q.Handle("k", m.handle)
	m.q = q
}

// close ends the hung run and closes both Queues and the file.
func (m *opsModel) close() {
	if m.hung != nil {
		m.hung.cancel()
		close(m.hung.release)
		<-m.hung.done
	}
	if m.q2 != nil {
		m.q2.Close()
	}
	if m.q != nil {
		m.q.Close()
	}
	os.RemoveAll(m.dir)
}

// handle runs a job of kind "k" as the plan says.
func (m *opsModel) handle(ctx context.Context, job *litequeue.Job) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ran = append(m.ran, job.ID)
	o, ok := m.plan[job.ID]
	delete(m.plan, job.ID)
	if !ok {
		m.errs = append(m.errs, fmt.Sprintf("job %d ran without a planned outcome", job.ID))
	}
	switch o {
	case "fail":
		return errors.New("fail")
	case "snooze":
		return litequeue.Snooze(snoozeFor)
	case "permanent":
		return litequeue.Permanent(errors.New("permanent"))
	case "discard":
		return fmt.Errorf("gone: %w", litequeue.ErrDiscard)
	}
	return nil
}

func (m *opsModel) event(e litequeue.Event) {
	if e.Type == "job.dead" {
		m.mu.Lock()
		m.deaths[e.Job.ID]++
		m.mu.Unlock()
	}
}

// pick draws the ID of a job seen so far (possibly purged), or one never
// used.
func (m *opsModel) pick(t *rapid.T) int64 {
	if len(m.ids) == 0 || rapid.IntRange(0, 9).Draw(t, "unknown") == 0 {
		return 1_000_000
	}
	return rapid.SampledFrom(m.ids).Draw(t, "id")
}

// liveWithKey returns the pending or running job that holds key.
func (m *opsModel) liveWithKey(key string) *modelJob {
	for _, j := range m.jobs {
		if key != "" && j.key == key && (j.state == litequeue.Pending || j.state == litequeue.Running) {
			return j
		}
	}
	return nil
}

func (m *opsModel) enqueue(t *rapid.T) {
	kind := rapid.SampledFrom([]string{"k", "k", "k", "orphan"}).Draw(t, "kind")
	delay := rapid.SampledFrom([]time.Duration{0, 0, 5 * time.Second, time.Minute, time.Hour}).Draw(t, "delay")
	key := rapid.SampledFrom([]string{"", "", "a", "b"}).Draw(t, "key")
	maxTries := rapid.SampledFrom([]int{0, 0, 1, 2, 5}).Draw(t, "maxTries")
	priority := rapid.IntRange(0, 1).Draw(t, "priority")
	opts := []litequeue.EnqueueOption{litequeue.Delay(delay), litequeue.Priority(priority)}
	if key != "" {
		opts = append(opts, litequeue.UniqueKey(key))
	}
	if maxTries != 0 {
		opts = append(opts, litequeue.MaxTries(maxTries))
	}
	j, err := m.q.Enqueue(context.Background(), kind, nil, opts...)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if live := m.liveWithKey(key); live != nil {
		if !j.Duplicate || j.ID != live.id {
			t.Fatalf("Enqueue with key %q held by job %d: got job %d, duplicate %v", key, live.id, j.ID, j.Duplicate)
		}
		return
	}
	if j.Duplicate || m.jobs[j.ID] != nil {
		t.Fatalf("Enqueue returned job %d (duplicate %v), want a new job", j.ID, j.Duplicate)
	}
	if maxTries == 0 {
		maxTries = opsPolicy.MaxTries
	}
	m.jobs[j.ID] = &modelJob{
		id: j.ID, kind: kind, key: key, priority: priority, state: litequeue.Pending,
		maxTries: maxTries, runAt: m.clk.Now().Add(delay),
	}
	m.mu.Lock()
	delete(m.deaths, j.ID) // an ID of a purged job, used again
	m.mu.Unlock()
	if !slices.Contains(m.ids, j.ID) {
		m.ids = append(m.ids, j.ID)
	}
}

// due returns the jobs RunDue claims at now, in its order.
func (m *opsModel) due(now time.Time) []*modelJob {
	var due []*modelJob
	for _, j := range m.jobs {
		if j.kind == "k" && j.state == litequeue.Pending && !j.runAt.After(now) {
			due = append(due, j)
		}
	}
	slices.SortFunc(due, func(a, b *modelJob) int {
		return cmp.Or(-cmp.Compare(a.priority, b.priority), a.runAt.Compare(b.runAt), cmp.Compare(a.id, b.id))
	})
	return due
}

// fail records a failed try of j at now: a retry, or death.
func (j *modelJob) fail(now time.Time, permanent bool) {
	if permanent || j.attempt >= j.maxTries {
		j.state, j.finished = litequeue.Dead, now
		j.deaths++
		return
	}
	j.state, j.runAt = litequeue.Pending, now.Add(retryWait)
}

func (m *opsModel) runDue(t *rapid.T) {
	now := m.clk.Now()
	// Rescue: the hung run's lease ended VisibilityTimeout after its claim.
	if h := m.hung; h != nil {
		if j := m.jobs[h.id]; j != nil && j.state == litequeue.Running && !h.at.Add(litequeue.DefaultVisibilityTimeout).After(now) {
			j.history++
			if j.cancelReq {
				j.state, j.finished, j.cancelReq = litequeue.Cancelled, now, false
			} else {
				j.fail(now, false)
			}
		}
	}
	due := m.due(now)
	var want []int64
	m.mu.Lock()
	m.ran = nil
	for _, j := range due {
		m.plan[j.id] = rapid.SampledFrom(runPlans).Draw(t, fmt.Sprintf("outcome of job %d", j.id))
		want = append(want, j.id)
	}
	m.mu.Unlock()
	plan := maps.Clone(m.plan)

	n, err := m.q.RunDue(context.Background())
	if err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	m.mu.Lock()
	ran, errs := m.ran, m.errs
	m.mu.Unlock()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if n != len(due) || !slices.Equal(ran, want) {
		t.Fatalf("RunDue ran %v (n=%d), want %v: each due job once, in priority, RunAt, ID order", ran, n, want)
	}
	for _, j := range due {
		j.attempt++
		j.history++
		switch plan[j.id] {
		case "succeed":
			j.state, j.finished = litequeue.Completed, now
		case "fail":
			j.fail(now, false)
		case "permanent":
			j.fail(now, true)
		case "snooze":
			j.attempt--
			j.state, j.runAt = litequeue.Pending, now.Add(snoozeFor)
		case "discard":
			j.state, j.finished = litequeue.Discarded, now
		}
	}
	// Retention, after the runs.
	for id, j := range m.jobs {
		ttl := opsKeep
		if j.state == litequeue.Dead {
			ttl = opsDeadTTL
		}
		if (j.state == litequeue.Dead || j.state == litequeue.Completed || j.state == litequeue.Discarded || j.state == litequeue.Cancelled) &&
			!j.finished.Add(ttl).After(now) {
			delete(m.jobs, id)
		}
	}
}

func (m *opsModel) replay(t *rapid.T) {
	id := m.pick(t)
	err := m.q.Replay(context.Background(), id)
	j := m.jobs[id]
	switch {
	case j == nil:
		if !errors.Is(err, litequeue.ErrNotFound) {
			t.Fatalf("Replay(%d) of no job: %v, want ErrNotFound", id, err)
		}
	case j.state != litequeue.Dead:
		if err == nil {
			t.Fatalf("Replay(%d) of a %s job succeeded", id, j.state)
		}
	case m.liveWithKey(j.key) != nil:
		if err == nil {
			t.Fatalf("Replay(%d) succeeded while job %d holds its key %q", id, m.liveWithKey(j.key).id, j.key)
		}
	default:
		if err != nil {
			t.Fatalf("Replay(%d): %v", id, err)
		}
		j.state, j.attempt, j.runAt, j.finished = litequeue.Pending, 0, m.clk.Now(), time.Time{}
		j.history++
	}
}

func (m *opsModel) cancel(t *rapid.T) {
	id := m.pick(t)
	err := m.q.Cancel(context.Background(), id)
	j := m.jobs[id]
	switch {
	case j == nil:
		if !errors.Is(err, litequeue.ErrNotFound) {
			t.Fatalf("Cancel(%d) of no job: %v, want ErrNotFound", id, err)
		}
	case j.state == litequeue.Pending:
		if err != nil {
			t.Fatalf("Cancel(%d) of a pending job: %v", id, err)
		}
		j.state, j.finished = litequeue.Cancelled, m.clk.Now()
	case j.state == litequeue.Running:
		if err != nil {
			t.Fatalf("Cancel(%d) of a running job: %v", id, err)
		}
		j.cancelReq = true
	default:
		if err == nil || errors.Is(err, litequeue.ErrNotFound) {
			t.Fatalf("Cancel(%d) of a %s job: %v, want an error naming its state", id, j.state, err)
		}
	}
}

func (m *opsModel) advance(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{
		time.Second, retryWait, 29 * time.Second, litequeue.DefaultVisibilityTimeout,
		time.Minute, 10 * time.Minute, time.Hour, 3 * time.Hour,
	}).Draw(t, "advance")
	m.clk.Add(d)
}

func (m *opsModel) reopen(t *rapid.T) {
	if err := m.q.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	m.q = nil
	m.open(t)
}

// hang makes the other process claim the first due job and hang in its
// handler, its clock standing still: it never renews the lease.
func (m *opsModel) hang(t *rapid.T) {
	due := m.due(m.clk.Now())
	if m.hung != nil || len(due) == 0 {
		t.Skip("a run hangs already, or nothing is due")
	}
	if m.q2 == nil {
		m.clk2 = newMock()
		// Its retention never runs: its RunDue is cancelled before it ends.
		q2, err := openBackend(t, m.path, litequeue.Options{Clock: m.clk2, Retry: opsPolicy, Synchronous: "normal"})
		if err != nil {
			t.Fatalf("Open the other process's Queue: %v", err)
		}
		m.q2, m.started = q2, make(chan int64)
		q2.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
			m.mu.Lock()
			release := m.release
			m.mu.Unlock()
			m.started <- job.ID
			<-release
			return nil
		})
	}
	now := m.clk.Now()
	m.clk2.Set(now)
	ctx, cancel := context.WithCancel(context.Background())
	h := &hungRun{at: now, release: make(chan struct{}), cancel: cancel, done: make(chan runResult, 1)}
	m.hung = h
	m.mu.Lock()
	m.release = h.release
	m.mu.Unlock()
	go func() {
		n, err := m.q2.RunDue(ctx)
		h.done <- runResult{n, err}
	}()
	select {
	case h.id = <-m.started:
	case r := <-h.done:
		t.Fatalf("the other process's RunDue returned %d, %v without running a job", r.n, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the other process's worker did not start a job within 10s")
	}
	if h.id != due[0].id {
		t.Fatalf("the other process claimed job %d, want the first due, %d", h.id, due[0].id)
	}
	j := m.jobs[h.id]
	j.state = litequeue.Running
	j.attempt++
}

// returnHung lets the hung run return nil. If its lease was rescued
// meanwhile, its completion is refused and changes nothing; else it
// completes the job (or records it cancelled, if Cancel asked), at the
// time on its own clock.
func (m *opsModel) returnHung(t *rapid.T) {
	h := m.hung
	if h == nil {
		t.Skip("no run hangs")
	}
	h.cancel() // so that its RunDue claims nothing more
	close(h.release)
	r := <-h.done
	m.hung = nil
	if r.n != 1 || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("the other process's RunDue = %d, %v; want 1, context.Canceled", r.n, r.err)
	}
	j := m.jobs[h.id]
	if j == nil || j.state != litequeue.Running {
		return // rescued: the stale completion was refused
	}
	j.history++
	j.finished = h.at
	j.state = litequeue.Completed
	if j.cancelReq {
		j.state, j.cancelReq = litequeue.Cancelled, false
	}
}

// check compares the file with the model.
func (m *opsModel) check(t *rapid.T) {
	ctx := context.Background()
	jobs, err := m.q.List(ctx, litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		ID int64 `db:"job_id"`
		N  int   `db:"n"`
	}
	if err := m.q.DB().Select(&rows, `SELECT job_id, COUNT(*) AS n FROM litequeue_attempts GROUP BY job_id`); err != nil {
		t.Fatal(err)
	}
	historyOf := map[int64]int{}
	for _, r := range rows {
		historyOf[r.ID] = r.N
	}
	m.mu.Lock()
	deaths := maps.Clone(m.deaths)
	m.mu.Unlock()

	seen := map[int64]bool{}
	live := map[string]int64{}
	inState := map[litequeue.State]int{}
	for _, got := range jobs {
		seen[got.ID] = true
		want := m.jobs[got.ID]
		if want == nil {
			t.Fatalf("job %d (%s) is in the file, not in the model", got.ID, got.State)
		}
		if got.State != want.state || got.Attempt != want.attempt || got.MaxTries != want.maxTries {
			t.Fatalf("job %d: %s, attempt %d of %d; model: %s, attempt %d of %d",
				got.ID, got.State, got.Attempt, got.MaxTries, want.state, want.attempt, want.maxTries)
		}
		if got.Attempt > got.MaxTries {
			t.Fatalf("job %d: attempt %d > MaxTries %d", got.ID, got.Attempt, got.MaxTries)
		}
		if got.State == litequeue.Pending && !got.RunAt.Equal(want.runAt) {
			t.Fatalf("job %d: RunAt %v, model %v", got.ID, got.RunAt, want.runAt)
		}
		if terminal := got.State != litequeue.Pending && got.State != litequeue.Running; terminal && !got.FinishedAt.Equal(want.finished) {
			t.Fatalf("job %d: FinishedAt %v, model %v", got.ID, got.FinishedAt, want.finished)
		} else if !terminal && !got.FinishedAt.IsZero() {
			t.Fatalf("job %d: %s with FinishedAt %v", got.ID, got.State, got.FinishedAt)
		}
		inState[got.State]++
		if got.State == litequeue.Running && (m.hung == nil || m.hung.id != got.ID) {
			t.Fatalf("job %d is running, and no worker holds it", got.ID)
		}
		if historyOf[got.ID] != want.history {
			t.Fatalf("job %d: %d history rows, model %d", got.ID, historyOf[got.ID], want.history)
		}
		if deaths[got.ID] != want.deaths {
			t.Fatalf("job %d: %d job.dead events, model %d deaths", got.ID, deaths[got.ID], want.deaths)
		}
		if got.UniqueKey != "" && (got.State == litequeue.Pending || got.State == litequeue.Running) {
			if other, ok := live[got.UniqueKey]; ok {
				t.Fatalf("jobs %d and %d both live with key %q", other, got.ID, got.UniqueKey)
			}
			live[got.UniqueKey] = got.ID
		}
	}
	for id, j := range m.jobs {
		if !seen[id] {
			t.Fatalf("job %d (%s in the model) is lost", id, j.state)
		}
	}
	// List by state reads each state's partial index: it finds every job.
	for _, st := range []litequeue.State{litequeue.Pending, litequeue.Running, litequeue.Completed,
		litequeue.Dead, litequeue.Discarded, litequeue.Cancelled} {
		listed, err := m.q.List(ctx, litequeue.Filter{State: st})
		if err != nil {
			t.Fatal(err)
		}
		if len(listed) != inState[st] {
			t.Fatalf("List(State: %s) found %d jobs, the file holds %d", st, len(listed), inState[st])
		}
	}
	stats, err := m.q.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := stats.Queues[litequeue.DefaultQueue]
	if sum := s.Due + s.Scheduled + s.Running + s.Dead + s.Completed + s.Discarded + s.Cancelled; sum != len(jobs) {
		t.Fatalf("Stats count %d jobs in their states (%+v), the file holds %d", sum, s, len(jobs))
	}
}
