package litequeue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/benbjohnson/clock"
)

// errShutdown is the cause given to a handler's context when Work's
// shutdown grace ran out.
var errShutdown = errors.New("litequeue: worker shutting down")

// errTimedOut is the cause given to a handler's context when its timeout
// passed.
var errTimedOut = errors.New("litequeue: handler timed out")

// panicError carries a recovered panic out of a handler.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v\n\n%s", e.value, e.stack) }

// class is the ErrorClass of the panic: that of an error value, as for a
// returned error, else the Go type of the value.
func (e *panicError) class() string {
	if err, ok := e.value.(error); ok {
		return errorClass(err)
	}
	return fmt.Sprintf("%T", e.value)
}

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
func (q *Queue) execute(ctx context.Context, l *lease, st steer) (*lease, error) {
	defer q.unhold(l)
	// A run's renewals and outcome are written even after the caller's ctx
	// is done: a shutdown must not strand the job as running.
	ctx = context.WithoutCancel(ctx)
	next := st.next
	if next == nil {
		next = noNext
	}
	every := q.renewEvery()
	renew := q.clock.Timer(every)
	defer renew.Stop()

	var (
		result  chan error // nil until the handler starts
		timer   *clock.Timer
		timeout <-chan time.Time
		cancel  context.CancelCauseFunc = func(error) {}
		cause   error                   // why the handler's context was cancelled
		waiting = st.slots
		stop    = st.stop
		holding bool // a token in st.slots
	)
	free := func() { // the slot, once the handler returned or was left behind
		if holding {
			<-st.slots
			holding = false
		}
	}
	defer func() {
		cancel(nil)
		free()
		if timer != nil {
			timer.Stop()
		}
	}()
	start := func() {
		l.started = q.now()
		var hctx context.Context
		hctx, cancel = context.WithCancelCause(ctx)
		// The timers exist before the handler starts, so that a test that
		// advances the mock clock once the handler runs always moves them.
		if l.h.timeout > 0 {
			timer = q.clock.Timer(l.h.timeout)
			timeout = timer.C
			hctx = deadlineContext{hctx, l.started.Add(l.h.timeout)}
		}
		result = make(chan error, 1)
		go func() { result <- call(hctx, l) }()
		waiting, stop = nil, nil
	}
	if waiting == nil {
		start()
	}
	for {
		renewing := false
		select {
		case waiting <- struct{}{}:
			holding = true
			start()
		case <-stop:
			return q.settleRun(ctx, l, ending{}, nil)
		case err := <-result:
			if st.ran != nil {
				st.ran(q.now().Sub(l.started))
			}
			free()
			if errors.Is(cause, errShutdown) {
				next = noNext
			}
			return q.settleRun(ctx, l, runEnding(l, err, cause), next())
		case <-timeout:
			cancel(errTimedOut)
			free()
			return q.settleRun(ctx, l, ending{
				outcome: OutcomeTimedOut,
				errText: fmt.Sprintf("timed out after %v", l.h.timeout),
				class:   "timeout",
				delay:   l.delay,
			}, next())
		case <-renew.C:
			renewing = true
		case <-l.renewNow:
			renewing = true
		case <-st.shutdown:
			st.shutdown = nil
			if result == nil {
				return q.settleRun(ctx, l, ending{}, nil)
			}
			if cause == nil {
				cause = errShutdown
				cancel(errShutdown)
			}
		case <-st.abandon:
			return nil, nil
		}
		if !renewing {
			continue
		}
		switch err := q.renew(ctx, l); {
		case errors.Is(err, errCompletedTx):
			// CompleteTx committed the run: no lease is left to renew,
			// and the handler's context lives on until it returns.
			continue
		case result == nil && errors.Is(err, ErrLeaseLost):
			return nil, nil // never started: nothing to record
		case result == nil && errors.Is(err, errCancelRequested):
			return q.settleRun(ctx, l, ending{outcome: OutcomeCancelled}, next())
		case errors.Is(err, ErrLeaseLost), errors.Is(err, errCancelRequested):
			if cause == nil {
				cause = err
				cancel(err)
			}
		case err != nil:
			q.opts.Logger.Error("litequeue: renew lease", "job", l.job.ID, "err", err)
		}
		renew.Reset(every)
	}
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
func (q *Queue) renewEvery() time.Duration {
	return max(q.opts.VisibilityTimeout/3, time.Millisecond)
}

// noNext takes no next job.
func noNext() *claimer { return nil }

// settleRun commits a run's ending and claims the next job if next is not
// nil. A lease lost meanwhile is logged, not returned: the job is someone
// else's now.
func (q *Queue) settleRun(ctx context.Context, l *lease, e ending, next *claimer) (*lease, error) {
	nl, err := q.finish(ctx, l, e, next)
	if errors.Is(err, ErrLeaseLost) {
		q.opts.Logger.Warn("litequeue: run finished after its lease was lost; its result is discarded",
			"job", l.job.ID, "kind", l.job.Kind, "outcome", e.outcome)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("litequeue: record run of job %d: %w", l.job.ID, err)
	}
	return nl, nil
}

// call runs the handler, turning a panic into a *panicError.
func call(ctx context.Context, l *lease) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return l.h.fn(ctx, l.job)
}

// runEnding classifies what a handler returned, given why its context was
// cancelled, if it was. A handler that returns after the shutdown grace
// cancelled its context is released, whatever it returned (DESIGN.md,
// Shutdown): nil too, since a handler cut short may return nil without
// having done its work. One that completed through CompleteTx stays
// completed (see settleStale).
func runEnding(l *lease, err error, cause error) ending {
	var (
		pe *panicError
		se *snoozeError
		pm *permanentError
		ra *retryAfterError
	)
	switch {
	case errors.Is(cause, errCancelRequested):
		return ending{outcome: OutcomeCancelled, errText: errText(err)}
	case errors.Is(cause, errShutdown):
		return ending{} // released: no try used
	case err == nil:
		return ending{outcome: OutcomeCompleted}
	case errors.As(err, &pe):
		return ending{outcome: OutcomePanicked, errText: pe.Error(), class: pe.class(), delay: l.delay}
	case errors.As(err, &se):
		return ending{outcome: OutcomeSnoozed, delay: se.delay}
	case errors.As(err, new(*cancelJobError)):
		return ending{outcome: OutcomeCancelled, errText: err.Error(), class: errorClass(err)}
	case errors.Is(err, ErrDiscard):
		return ending{outcome: OutcomeDiscarded, errText: err.Error(), class: errorClass(err)}
	case errors.As(err, &pm):
		return ending{outcome: OutcomeFailed, errText: err.Error(), class: errorClass(err), permanent: true}
	case errors.As(err, &ra):
		return ending{outcome: OutcomeFailed, errText: err.Error(), class: errorClass(err), delay: ra.delay}
	}
	return ending{outcome: OutcomeFailed, errText: err.Error(), class: errorClass(err), delay: l.delay}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
