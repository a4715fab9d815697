package litequeue

import (
	"context"
	"errors"
)

// wrap returns what a run of h calls: its handler, in its own middleware
// and in the Queue's. The Queue's are composed at a run, so that a Use
// after Handle applies too, and only again once Use has added more, by one
// run while the others wait (each middleware is applied to a handler
// once). It returns before the handler is called, rather than wrapping
// it, so that no frame of litequeue's lies between the run's call and the
// handler (every frame more made more handlers outgrow their goroutine's
// first stack, which was then copied at each run).
func (r *registry) wrap(h *handler) Handler {
	r.mu.RLock()
	mw := r.middleware
	r.mu.RUnlock()
	if c := h.composed.Load(); c != nil && c.n == len(mw) {
		return c.fn
	}
	h.composing.Lock()
	defer h.composing.Unlock()
	c := h.composed.Load()
	if c == nil || c.n != len(mw) {
		c = &composed{n: len(mw), fn: compose(h.fn, mw)}
		h.composed.Store(c)
	}
	return c.fn
}

// compose wraps h in mw, the first outermost.
func compose(h Handler, mw []func(Handler) Handler) Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// ResultOutcome names how a run ends, as a middleware can tell from its
// ctx and from err, what the next handler returned: completed for nil,
// snoozed, cancelled and discarded for [Snooze], [CancelJob] and
// [ErrDiscard], timed_out or cancelled when ctx was cancelled by the
// timeout or by [Queue.Cancel], lease_expired when the lease was lost,
// failed for any other error ([Permanent] and [RetryAfter] too). It
// returns "" for a run that a shutdown cut short: its job is released and
// nothing is recorded. (A panic never reaches it: the middleware sees it
// as a panic, and the run is recorded as panicked.)
func ResultOutcome(ctx context.Context, err error) Outcome {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTimedOut):
		return OutcomeTimedOut
	case errors.Is(cause, errCancelRequested):
		return OutcomeCancelled
	case errors.Is(cause, ErrLeaseLost):
		return OutcomeLeaseExpired
	case errors.Is(cause, errShutdown):
		return ""
	}
	switch {
	case err == nil:
		return OutcomeCompleted
	case errors.As(err, new(*snoozeError)):
		return OutcomeSnoozed
	case errors.As(err, new(*cancelJobError)):
		return OutcomeCancelled
	case errors.Is(err, ErrDiscard):
		return OutcomeDiscarded
	}
	return OutcomeFailed
}
