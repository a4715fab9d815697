package litequeue

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// WorkerOptions configure one [Queue.Work] call. The zero value is valid.
type WorkerOptions struct {
	Queues        []string      // the queues to take jobs from, each a name (see [NameLimit]); nil: every queue
	Concurrency   int           // handlers running at once; 0: 10
	ShutdownGrace time.Duration // after ctx is done, how long running handlers may finish; 0: 30s
	Name          string        // the worker's name in history rows; "": host:pid
}

// Defaults for the zero fields of [WorkerOptions].
const (
	DefaultConcurrency   = 10
	DefaultShutdownGrace = 30 * time.Second
)

// pollInterval bounds how long an idle worker sleeps before it looks again
// for jobs written by other processes (or by EnqueueTx), where nothing
// wakes it for them (see changes.poll, and notifiedPoll where something
// does).
const pollInterval = time.Second

// errorBackoff is how long the loop waits after a failed claim or rescue.
const errorBackoff = time.Second

// Work runs handlers for due jobs until ctx is done, then shuts down, and
// returns nil after a clean shutdown ([ErrClosed] if the [Queue] was
// already closed). Up to [WorkerOptions.Concurrency] handlers run at once;
// jobs are claimed in batches, only of kinds with a handler on this Queue.
// While the handlers return within 10ms on average (and Concurrency is
// above 1), Work leases up to four times Concurrency jobs: the extra ones
// are running (leased, their leases renewed) while they wait for a handler
// slot, so that a worker starts its next job while the commit that records
// its last one is under way, and many runs share one commit. An idle Work
// wakes at once on a [Queue.Enqueue] or a [Queue.Handle] in this process,
// and for writes by other processes or the app's [Queue.EnqueueTx]: on a
// file on Linux, when the file system tells of a change of the file or its
// -wal (it watches the file's directory), or else at its next look — every
// second, and every minute once the file has been quiet for 30 seconds;
// elsewhere, and when the file system cannot tell, within a second; on
// PostgreSQL, on a notification, or else within a second. Otherwise it
// sleeps until the next [Job.RunAt], lease expiry or retention sweep on the
// injected clock. Any worker rescues expired leases, and enforces retention
// ([Options.DeadTTL], [Options.KeepFinished], expired idempotency keys) at
// most once a minute on the injected clock.
//
// Shutdown: Work stops claiming and waits up to
// [WorkerOptions.ShutdownGrace] for running handlers; then it cancels their
// contexts. A job whose handler then returns is released without using a
// try; after a further wait of the same length (at most 5s), a handler that
// has not returned is abandoned, and its job comes back through lease
// expiry. [Queue.Close] shuts down every Work call the same way.
func (q *Queue) Work(ctx context.Context, opts WorkerOptions) error {
	if ctx == nil {
		return errNilContext
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.works.Add(1)
	q.mu.Unlock()
	defer q.works.Done()

	if q.st.readOnly() {
		return ErrReadOnly
	}
	return q.run.work(ctx, opts)
}

// work is Work, once it is admitted.
func (rn *runner) work(ctx context.Context, opts WorkerOptions) error {
	switch {
	case opts.Concurrency < 0:
		return fmt.Errorf("litequeue: work: Concurrency %d is negative", opts.Concurrency)
	case opts.ShutdownGrace < 0:
		return fmt.Errorf("litequeue: work: ShutdownGrace %v is negative", opts.ShutdownGrace)
	}
	for _, name := range opts.Queues {
		if err := checkName("queue", name); err != nil {
			return fmt.Errorf("litequeue: work: Queues: %w", err)
		}
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = DefaultShutdownGrace
	}
	if opts.Name == "" {
		opts.Name = rn.worker
	}
	p := &pool{
		rn:       rn,
		opts:     opts,
		self:     &claimer{queues: opts.Queues, worker: opts.Name},
		slots:    make(chan struct{}, opts.Concurrency),
		done:     make(chan struct{}, opts.Concurrency*leaseFactor),
		grow:     make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		shutdown: make(chan struct{}),
		abandon:  make(chan struct{}),
	}
	p.wk = store.NewWaker(rn.wake.fire, p.room)
	watch, err := rn.st.eng.Watch(p.wk)
	if err != nil {
		return fmt.Errorf("litequeue: work: %w", err)
	}
	defer watch.Close()
	p.watch = watch
	p.hb = newHeartbeat(rn, &p.opts)
	p.loop(ctx)
	close(p.stopped)
	p.drain()
	p.hb.stop(ctx)
	return nil
}

// Short handlers: while the handlers of a Work call return within
// shortRun on average, it leases up to leaseFactor times Concurrency jobs,
// of which Concurrency run and the others wait for a slot, their leases
// renewed as the running ones' are. A worker whose handler returns then
// starts the next job at once, while the commit that records its run (and
// claims its next job) is still under way: more jobs share each commit. It
// does not with slow handlers, whose waiting jobs would be kept from the
// workers of other processes, nor with a Concurrency of 1, which runs jobs
// strictly in claim order.
const (
	leaseFactor = 4
	shortRun    = 10 * time.Millisecond
)

// pool is the state of one Work call.
type pool struct {
	rn       *runner
	opts     WorkerOptions
	self     *claimer      // every run of the pool claims as it: its ends share one claim (see runner.Claim)
	running  atomic.Int64  // runs started whose end the loop has not yet taken from done
	slots    chan struct{} // one token per handler running
	watch    store.Changes
	wk       store.Waker   // how watch wakes the loop
	hb       *heartbeat    // the loop's record of itself in the database
	seen     sightings     // expired leases not yet rescued
	busy     bool          // the last claim found all it asked for
	lookAt   time.Time     // when fill next looks before it claims
	looked   time.Time     // when fill last looked
	kinds    int           // how many kinds had a handler then (see Queue.handled)
	next     time.Time     // what that look found: when work is next due; zero for never
	done     chan struct{} // one send per finished run
	grow     chan struct{} // a send when handlers turned short
	stopped  chan struct{} // closed when Work stops claiming
	shutdown chan struct{} // closed when the grace ran out
	abandon  chan struct{} // closed when Work stops waiting

	mu      sync.Mutex
	avg     time.Duration // moving average of the handlers' run times
	samples int
	short   atomic.Bool // avg is at most shortRun
}

// limit is how many jobs the pool leases at most.
func (p *pool) limit() int {
	if p.short.Load() && p.opts.Concurrency > 1 {
		return p.opts.Concurrency * leaseFactor
	}
	return p.opts.Concurrency
}

// room reports whether the pool has room for a job: it leases fewer than
// it may. Any goroutine may ask.
func (p *pool) room() bool { return p.limit()-int(p.running.Load()) > 0 }

// ran learns that a handler ran for d.
func (p *pool) ran(d time.Duration) {
	p.mu.Lock()
	if p.samples == 0 {
		p.avg = d
	} else {
		p.avg += (d - p.avg) / 8
	}
	p.samples++
	short := p.avg <= shortRun
	p.mu.Unlock()
	if was := p.short.Swap(short); short && !was {
		select {
		case p.grow <- struct{}{}:
		default:
		}
	}
}

// loop claims and starts jobs until ctx is done or the Queue closes,
// runs the janitor at most once every sweepEvery, and records the loop
// in the database at its heartbeat.
func (p *pool) loop(ctx context.Context) {
	var swept time.Time
	for {
		p.hb.beat(ctx, len(p.slots))
		swept = p.sweep(ctx, swept)
		p.recordKinds(ctx)
		wake := p.rn.wake.wait() // before looking, so that no Enqueue is missed
		slot := p.firePeriodic(ctx)
		until, again, stop := p.claimFree(ctx)
		switch {
		case stop:
			return
		case again:
			continue
		}
		until = earlier(earlier(until, slot), earlier(swept.Add(sweepEvery), p.hb.due(p.rn.now())))
		if !until.After(p.rn.now()) {
			continue
		}
		if !p.sleep(ctx, wake, until) {
			return
		}
	}
}

// earlier returns the earlier of a and b, either of which may be zero:
// no time.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// firePeriodic is the scheduler's fire for Work's loop, which logs an error
// and tries again after errorBackoff.
func (p *pool) firePeriodic(ctx context.Context) time.Time {
	rn := p.rn
	next, err := rn.firePeriodic(ctx)
	if err != nil {
		if ctx.Err() == nil {
			rn.logger.Error("litequeue: work", "err", err)
		}
		return rn.now().Add(errorBackoff)
	}
	return next
}

// sweep runs the janitor if it last ran, at swept, sweepEvery ago or more,
// and returns when it last ran.
func (p *pool) sweep(ctx context.Context, swept time.Time) time.Time {
	rn := p.rn
	now := rn.now()
	if !swept.IsZero() && now.Sub(swept) < sweepEvery && !now.Before(swept) { // Before: the clock went back
		return swept
	}
	if err := rn.sweep(ctx); err != nil && ctx.Err() == nil {
		rn.logger.Error("litequeue: retention", "err", err)
	}
	return now
}

// claimFree claims jobs for the free places, if any, and says what the
// loop does next: look again at once, stop (Work is stopping and cut the
// claim short), or wait until until at the latest.
func (p *pool) claimFree(ctx context.Context) (until time.Time, again, stop bool) {
	rn := p.rn
	until = rn.now().Add(p.watch.Poll())
	free := p.limit() - int(p.running.Load())
	if free <= 0 {
		return until, false, false
	}
	started, next, err := p.fill(ctx, free)
	switch {
	case err != nil && ctx.Err() != nil:
		// Work is stopping and cut the claim short: its write rolled
		// back, nothing was leased.
		return time.Time{}, false, true
	case err != nil:
		rn.logger.Error("litequeue: work", "err", err)
		until = rn.now().Add(errorBackoff)
	case started > 0 && started < free:
		return time.Time{}, true, false // more may be due
	case started == 0 && !next.IsZero():
		if until = earlier(until, next); !until.After(rn.now()) {
			return time.Time{}, true, false // due already
		}
	}
	return until, false, false
}

// sleep waits until until, on the injected clock, for something to do: an
// Enqueue or a Handle in this process (wake), a run's end, handlers turned
// short. With room for a job, it first tells the watch that the loop is
// idle (see waker). It reports false when ctx is done or the Queue closes.
func (p *pool) sleep(ctx context.Context, wake <-chan struct{}, until time.Time) bool {
	rn := p.rn
	if p.room() {
		p.wk.Idled()
		if h := rn.sleepHook.Load(); h != nil {
			(*h)(p.opts.Queues, p.running.Load())
		}
	}
	t := timerAt(rn.clock, until)
	select {
	case <-ctx.Done():
	case <-rn.closing:
	case <-wake:
	case <-p.done:
		p.running.Add(-1)
		p.reap() // refill every free slot with one claim
	case <-p.grow:
	case <-t.C:
	}
	t.Stop()
	return ctx.Err() == nil && !rn.isClosing()
}

// reap counts every run that has finished since the last look.
func (p *pool) reap() {
	for {
		select {
		case <-p.done:
			p.running.Add(-1)
		default:
			return
		}
	}
}

// fill claims up to free jobs and starts each. While the last claim found
// as many jobs as it asked for, it claims straight away; otherwise, and at
// least every pollInterval, it first looks (see look). It returns how many
// jobs it started and, if none was due, when the next one will be.
func (p *pool) fill(ctx context.Context, free int) (started int, next time.Time, err error) {
	rn := p.rn
	if now := rn.now(); !p.busy || !now.Before(p.lookAt) {
		claim, err := p.look(ctx, now)
		if err != nil {
			return 0, time.Time{}, err
		}
		if !claim {
			return 0, p.next, nil
		}
	}
	leases, err := rn.claim(ctx, *p.self, free)
	p.busy = len(leases) == free
	for _, l := range leases {
		p.running.Add(1)
		go p.run(ctx, l, p.self)
	}
	return len(leases), time.Time{}, err
}

// look looks, reading only, for expired leases to rescue and for due jobs,
// unless nothing was written, no kind was added, nothing came due and the
// clock was not set back since the last look. It rescues what it finds
// expired, sets p.next, and reports whether a job is due to claim.
func (p *pool) look(ctx context.Context, now time.Time) (claim bool, err error) {
	rn := p.rn
	p.lookAt = now.Add(pollInterval)
	changed, err := p.watch.Changed(ctx)
	if err != nil {
		return false, err
	}
	kinds := rn.reg.count()
	if !changed && kinds == p.kinds && (p.next.IsZero() || now.Before(p.next)) && !now.Before(p.looked) {
		return false, nil
	}
	p.looked, p.kinds = now, kinds
	due, recheck, err := p.rescued(ctx, now)
	if err != nil {
		return false, err
	}
	p.next = store.NullTime(store.MinNull(due.pending, due.lease))
	if !recheck.IsZero() && (p.next.IsZero() || recheck.Before(p.next)) {
		p.next = recheck
	}
	if !due.pending.Valid || due.pending.Int64 > store.MS(now) {
		p.busy = false
		return false, nil
	}
	return true, nil
}

// rescued reads the due times, rescuing first the expired leases they
// show, and returns them with when to look again at leases that stay
// expired (zero: at the next poll or due time).
func (p *pool) rescued(ctx context.Context, now time.Time) (dueTimes, time.Time, error) {
	rn := p.rn
	due, err := rn.nextDue(ctx, p.opts.Queues)
	if err != nil || !due.needsRescue(now, rn.visibility) {
		return due, time.Time{}, err
	}
	if _, err := rn.rescue(ctx, &p.seen); err != nil {
		return due, time.Time{}, err
	}
	if due, err = rn.nextDue(ctx, p.opts.Queues); err != nil {
		return due, time.Time{}, err
	}
	if due.lease.Valid && due.lease.Int64 <= store.MS(now) {
		// Leases this Queue holds, which their holders renew, and leases
		// seen expired too recently to rescue: look again when the first
		// of those is confirmed, or at the next poll, not at once.
		due.lease = sql.NullInt64{}
		return due, p.seen.ripens(confirmWait(rn.visibility)), nil
	}
	return due, time.Time{}, nil
}

// run executes the lease, and then each next job claimed as the previous
// one is recorded, until none is due, Work is stopping or the pool leases
// more than its limit; then it frees its place.
func (p *pool) run(ctx context.Context, l *lease, self *claimer) {
	rn := p.rn
	st := steer{
		slots:    p.slots,
		stop:     p.stopped,
		shutdown: p.shutdown,
		abandon:  p.abandon,
		ran:      p.ran,
		next: func() *claimer {
			if ctx.Err() != nil || rn.isClosing() || p.running.Load() > int64(p.limit()) {
				return nil
			}
			return self
		},
	}
	for l != nil {
		var err error
		if l, err = rn.execute(ctx, l, st); err != nil {
			rn.logger.Error("litequeue: work", "err", err)
		}
	}
	p.done <- struct{}{}
}

// maxReleaseWait bounds the wait, after the grace ran out and the running
// handlers' contexts were cancelled, for them to return.
const maxReleaseWait = 5 * time.Second

// drain waits for the running handlers through the shutdown grace, cancels
// them, waits for them to return, and abandons those that do not.
func (p *pool) drain() {
	rn := p.rn
	if !p.await(p.opts.ShutdownGrace) {
		close(p.shutdown)
		if !p.await(min(p.opts.ShutdownGrace, maxReleaseWait)) {
			close(p.abandon)
			p.await(-1)
		}
	}
	rn.logger.Info("litequeue: worker stopped", "worker", p.opts.Name)
}

// await waits up to d on the injected clock (forever if d < 0) for every
// running handler to finish, and reports whether they all did.
func (p *pool) await(d time.Duration) bool {
	var timeout <-chan time.Time
	if d >= 0 {
		t := p.rn.clock.Timer(d)
		defer t.Stop()
		timeout = t.C
	}
	for p.running.Load() > 0 {
		select {
		case <-p.done:
			p.running.Add(-1)
		case <-timeout:
			return false
		}
	}
	return true
}

// timerAt arms a timer on the clock c that fires when the clock
// reads at, or at once if it already does. A clock's timer counts from the
// moment it is armed; a clock that a test steps ([clock.Mock]) may step
// between the reading of the time and the arming, and a timer counted from
// the time read would end that step late: never, if the test then holds
// the clock at at. So on such a clock timerAt arms again while a step came
// between, up to three times (a clock that steps on by itself keeps the
// last timer).
func timerAt(c clock.Clock, at time.Time) *clock.Timer {
	_, stepped := c.(interface{ Add(time.Duration) })
	for try := 1; ; try++ {
		now := c.Now()
		t := c.Timer(max(0, at.Sub(now))) // a mock moves back to a timer's end in the past
		if !stepped || try == 3 || c.Now().Equal(now) {
			return t
		}
		t.Stop()
	}
}
