package litequeue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// steer is how Work steers the runs of its pool; RunDue passes the zero
// value, with which a run starts at once and nothing stops it.
type steer struct {
	// slots, if not nil, holds one token per running handler: a leased job
	// waits for room in it before its handler starts (see pool.limit).
	slots chan struct{}
	// stop, closed when Work stops claiming, releases a job still waiting
	// for a slot, without using a try.
	stop <-chan struct{}
	// shutdown, when closed, cancels the handler's context; a job whose
	// handler then returns is released without using a try, whatever it
	// returned (see runEnding).
	shutdown <-chan struct{}
	// abandon, when closed, makes execute return at once without recording
	// anything: the job comes back through lease expiry.
	abandon <-chan struct{}
	// next, called when the run ends, returns the claimer of the worker's
	// next job, or nil to take none.
	next func() *claimer
	// ran, if not nil, learns how long each handler ran.
	ran func(time.Duration)
}

// execute runs the lease's handler on a goroutine of its own and commits
// how the run ended. While it waits it renews the lease every third of
// VisibilityTimeout, and at once when Cancel in this Queue asks (see
// lease.renewNow), and cancels the handler's context when Cancel asks the
// job to stop or the lease is lost. Once a committed CompleteTx completed
// the job it stops renewing and leaves the context alive. When the
// handler's timeout passes it records the run as timed_out at once and
// leaves the handler behind: its eventual result is discarded.
//
// Under Work a leased job may first wait for a slot (see steer); its lease
// is renewed meanwhile as a running one's. If Cancel asks it to stop while
// it waits, the run is recorded cancelled without its handler; if its
// lease is lost, it is dropped.
//
// execute returns the lease of the next job (see steer.next), claimed in
// the transaction that recorded this run.
func (rn *runner) execute(ctx context.Context, l *lease, st steer) (*lease, error) {
	r := rn.newRun(ctx, l, st)
	defer r.close()
	if r.waiting == nil {
		r.start()
	}
	for !r.ended {
		select {
		case r.waiting <- struct{}{}:
			r.holding = true
			r.start()
		case <-r.stop:
			r.settle(end{kind: endReleased}, nil)
		case err := <-r.result:
			r.returned(err)
		case <-r.timeout:
			r.timedOut()
		case <-r.renew.C:
			r.renewal()
		case <-l.renewNow:
			r.renewal()
		case <-r.st.shutdown:
			r.shutdown()
		case <-r.st.abandon:
			r.ended = true // nothing recorded: the job comes back through lease expiry
		}
	}
	return r.chained, r.err
}

// A run is one lease's run of its handler, from the claim until its end is
// committed: execute's state, with one method for each thing that can
// happen to it.
type run struct {
	rn    *runner
	l     *lease
	st    steer
	ctx   context.Context // outlives the caller's: a shutdown must not strand the job as running
	next  func() *claimer
	every time.Duration
	renew *clock.Timer

	waiting chan struct{}    // st.slots until the handler starts
	stop    <-chan struct{}  // st.stop until the handler starts
	holding bool             // a token in st.slots
	result  chan error       // nil until the handler starts
	timer   *clock.Timer     // the handler's timeout, if it has one
	timeout <-chan time.Time // timer.C
	cancel  context.CancelCauseFunc
	cause   error     // why the handler's context was cancelled
	value   *runValue // what the handler's calls record of the run; nil until it starts

	ended   bool   // the run's end is recorded, or the run dropped
	chained *lease // the next job, claimed with the run's end
	err     error  // the failure to record the end
}

func (rn *runner) newRun(ctx context.Context, l *lease, st steer) *run {
	r := &run{
		rn:      rn,
		l:       l,
		st:      st,
		ctx:     context.WithoutCancel(ctx),
		next:    st.next,
		every:   rn.renewEvery(),
		waiting: st.slots,
		stop:    st.stop,
		cancel:  func(error) {},
	}
	if r.next == nil {
		r.next = noNext
	}
	r.renew = rn.clock.Timer(r.every)
	return r
}

// close lets go of everything the run holds: the handler's context, its
// slot, its timers and its lease.
func (r *run) close() {
	r.cancel(nil)
	r.free()
	if r.timer != nil {
		r.timer.Stop()
	}
	r.renew.Stop()
	r.rn.unhold(r.l)
}

// start starts the handler.
func (r *run) start() {
	l := r.l
	l.started = r.rn.now()
	var hctx context.Context
	hctx, r.cancel = context.WithCancelCause(r.ctx)
	r.value = r.rn.newRunValue(l)
	hctx = withRun(hctx, r.value)
	// The timers exist before the handler starts, so that a test that
	// advances the mock clock once the handler runs always moves them.
	if l.h.timeout > 0 {
		r.timer = r.rn.clock.Timer(l.h.timeout)
		r.timeout = r.timer.C
		hctx = deadlineContext{hctx, l.started.Add(l.h.timeout)}
	}
	r.result = make(chan error, 1)
	if l.unopened != nil {
		r.result <- l.unopened // a payload that did not open never reaches a handler
	} else {
		go func() { r.result <- call(hctx, r.rn.reg, l.h, l.job) }()
	}
	r.waiting, r.stop = nil, nil
}

// free gives back the slot, once the handler returned or was left behind.
func (r *run) free() {
	if r.holding {
		<-r.st.slots
		r.holding = false
	}
}

// returned ends the run with what the handler returned. After a shutdown
// it takes no next job.
func (r *run) returned(err error) {
	if r.st.ran != nil {
		r.st.ran(r.rn.now().Sub(r.l.started))
	}
	r.free()
	next := r.next
	if errors.Is(r.cause, errShutdown) {
		next = noNext
	}
	r.settle(end{kind: endReturned, err: err, cause: r.cause}, next())
}

// timedOut ends the run at its timeout, leaving the handler behind.
func (r *run) timedOut() {
	r.cancel(errTimedOut)
	r.free()
	r.settle(end{kind: endTimedOut, timeout: r.l.h.timeout}, r.next())
}

// renewal renews the lease, at its turn or when Cancel asked. A run that
// CompleteTx completed renews no more.
func (r *run) renewal() {
	switch err := r.rn.renew(r.ctx, r.l); {
	case errors.Is(err, errCompletedTx):
		// CompleteTx committed the run: no lease is left to renew, and
		// the handler's context lives on until it returns.
		return
	case r.result == nil && errors.Is(err, ErrLeaseLost):
		r.ended = true // never started: nothing to record
		return
	case r.result == nil && errors.Is(err, errCancelRequested):
		r.settle(end{kind: endCancelled}, r.next())
		return
	case errors.Is(err, ErrLeaseLost), errors.Is(err, errCancelRequested):
		r.interrupt(err)
	case err != nil:
		r.rn.logger.Error("litequeue: renew lease", "job", r.l.job.ID, "err", err)
	default:
		r.value.flushProgress(r.ctx) // the latest report, held back by progressEvery
	}
	r.renew.Reset(r.every)
}

// shutdown cancels the handler's context once the shutdown grace ran out;
// a job still waiting for a slot is released at once.
func (r *run) shutdown() {
	r.st.shutdown = nil
	if r.result == nil {
		r.settle(end{kind: endReleased}, nil)
		return
	}
	r.interrupt(errShutdown)
}

// interrupt cancels the handler's context with cause, unless it was
// cancelled already.
func (r *run) interrupt(cause error) {
	if r.cause == nil {
		r.cause = cause
		r.cancel(cause)
	}
}

// settle commits the run's end e, and claims the next job if next is not
// nil. A lease lost meanwhile is logged, not returned: the job is someone
// else's now.
func (r *run) settle(e end, next *claimer) {
	l := r.l
	e.started, e.worker, e.output = l.started, l.worker, r.value.recorded()
	r.value.flushProgress(r.ctx) // the latest report, held back by progressEvery, before the lease goes
	r.ended = true
	chained, err := r.rn.finish(r.ctx, l, e, next)
	switch {
	case errors.Is(err, ErrLeaseLost):
		r.rn.logger.Warn("litequeue: run finished after its lease was lost; its result is discarded",
			"job", l.job.ID, "kind", l.job.Kind)
	case err != nil:
		r.err = fmt.Errorf("litequeue: record run of job %d: %w", l.job.ID, err)
	}
	r.chained = chained
}

// deadlineContext reports a handler's timeout as its deadline, on the
// injected clock's timeline; the timeout timer of execute, not the
// context, cancels it when the deadline passes.
type deadlineContext struct {
	context.Context
	deadline time.Time
}

func (c deadlineContext) Deadline() (time.Time, bool) { return c.deadline, true }

// renewEvery is how often a running job's lease is renewed.
func (rn *runner) renewEvery() time.Duration {
	return max(rn.visibility/3, time.Millisecond)
}

// noNext takes no next job.
func noNext() *claimer { return nil }

// finish commits how a run ended, e, if the run still holds the lease,
// and fires its event. It returns ErrLeaseLost, having changed nothing of
// the run, if it does not.
//
// The end is decided here (decide.go) and stored by the writer with the
// other ends of its batch (see store.Writer.settle), in one transaction:
// the job's row fenced by the lease, its history row, the gate's
// bookkeeping and the chained claims. A run whose fence finds its row
// changed since the claim is decided again on the row as it is, in the
// same transaction (see runner.Redecide).
//
// With a claimer, finish also claims the worker's next job in the same
// transaction, so a busy worker pays one commit per job, shared with every
// other worker finishing at the same time; the next job comes also when
// the lease was lost.
func (rn *runner) finish(ctx context.Context, l *lease, e end, next *claimer) (*lease, error) {
	d := decide(&l.row, e, rn.now())
	n := &runNote{job: l.job, end: e, next: next}
	end := &store.RunEnd[*runNote]{Claimed: &l.row, After: d.after, History: d.history,
		Gated: l.h.gated(), Next: next != nil, Note: n, Output: e.output}
	if err := rn.st.submit(&store.Op[*runNote]{Ctx: ctx, End: end}); err != nil { // a read-only Queue runs nothing
		return nil, err
	}
	if n.chained != nil {
		rn.hold(n.chained) // before OnEvent, which may take its time
	}
	var err error
	switch {
	case !end.Stored:
		err = ErrLeaseLost
	case n.redecided != nil:
		d = *n.redecided
	}
	if err == nil {
		if d.event.Type != "" {
			rn.events.emit(d.event)
		}
		rn.gate.emitRan(n.gated)
	}
	rn.events.emit(n.expired...)
	if n.chained != nil {
		rn.started(n.at, n.chained)
	}
	return n.chained, err
}

// call runs h for job, in the Queue's middleware, turning a panic into a
// *panicError: the handler's, or a middleware's as it is applied.
func call(ctx context.Context, reg *registry, h *handler, job *Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return reg.wrap(h)(ctx, job)
}
