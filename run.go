package litequeue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
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

// execute runs the lease's handler on a goroutine of its own and commits
// how the run ended. While it waits it renews the lease every third of
// VisibilityTimeout, and cancels the handler's context when Cancel asks
// the job to stop or the lease is lost. When the handler's timeout passes
// it records the run as timed_out at once and leaves the handler behind:
// its eventual result is discarded.
//
// shutdown, when closed, cancels the handler's context; a job whose handler
// then returns an error is released without using a try. abandon, when
// closed, makes execute return at once without recording anything: the job
// comes back through lease expiry. RunDue passes nil for both.
//
// next, called when the run ends, returns the claimer of the worker's next
// job, or nil to take none; execute returns that job's lease, claimed in
// the transaction that recorded this run.
func (q *Queue) execute(ctx context.Context, l *lease, shutdown, abandon <-chan struct{}, next func() *claimer) (*lease, error) {
	defer q.unhold(l)
	// A run's renewals and outcome are written even after the caller's ctx
	// is done: a shutdown must not strand the job as running.
	ctx = context.WithoutCancel(ctx)
	// The timers exist before the handler starts, so that a test that
	// advances the mock clock once the handler runs always moves them.
	var timeout <-chan time.Time
	if l.h.timeout > 0 {
		t := q.clock.Timer(l.h.timeout)
		defer t.Stop()
		timeout = t.C
	}
	every := q.renewEvery()
	renew := q.clock.Timer(every)
	defer renew.Stop()

	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	result := make(chan error, 1)
	go func() { result <- call(hctx, l) }()

	var cause error // why the handler's context was cancelled
	for {
		select {
		case err := <-result:
			if errors.Is(cause, errShutdown) {
				next = noNext
			}
			return q.settleRun(ctx, l, runEnding(l, err, cause), next())
		case <-timeout:
			cancel(errTimedOut)
			return q.settleRun(ctx, l, ending{
				outcome: OutcomeTimedOut,
				errText: fmt.Sprintf("timed out after %v", l.h.timeout),
				class:   "timeout",
				delay:   l.delay,
			}, next())
		case <-renew.C:
			switch err := q.renew(ctx, l); {
			case errors.Is(err, ErrLeaseLost), errors.Is(err, errCancelRequested):
				if cause == nil {
					cause = err
					cancel(err)
				}
			case err != nil:
				q.opts.Logger.Error("litequeue: renew lease", "job", l.job.ID, "err", err)
			}
			renew.Reset(every)
		case <-shutdown:
			shutdown = nil
			if cause == nil {
				cause = errShutdown
				cancel(errShutdown)
			}
		case <-abandon:
			return nil, nil
		}
	}
}

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
// cancelled, if it was.
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
	case err == nil:
		return ending{outcome: OutcomeCompleted}
	case errors.Is(cause, errShutdown):
		return ending{} // released: no try used
	case errors.As(err, &pe):
		return ending{outcome: OutcomePanicked, errText: pe.Error(), class: fmt.Sprintf("%T", pe.value), delay: l.delay}
	case errors.As(err, &se):
		return ending{outcome: OutcomeSnoozed, delay: se.delay}
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
