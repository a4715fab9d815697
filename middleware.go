package litequeue

import (
	"context"
	"errors"
)

// Use adds middleware that wraps every handler of the [Queue], those
// registered before the call too, from their next run on: cross-cutting
// code such as tracing, logging and metrics. Each middleware is given the
// next [Handler] and returns one that runs in its place; it sees the run's
// ctx (the handler's, with its deadline and cancellation) and [*Job], may
// pass on another ctx, and gets what the handler returns, so it can
// observe the outcome and the duration. The run records what the
// outermost middleware returns. A handler's panic passes up through the
// middleware as a panic (their deferred calls run) and is recorded as
// panicked; a run past its timeout is recorded as timed_out at once,
// whatever the middleware returns later.
//
// Order: middleware given to Use wraps that given to [WithMiddleware], and
// within each, the first given is the outermost. After Use(a, b), Use(c)
// and [Queue.Handle](kind, h, WithMiddleware(d)), a run calls
// a(b(c(d(h)))): a sees the run start first and end last. Each middleware
// is applied to a handler once, at the handler's first run after the Use
// that added it. Use is safe to call while runs are in progress; it panics
// on a nil middleware.
func (q *Queue) Use(mw ...func(Handler) Handler) {
	checkMiddleware("Use", mw)
	q.reg.use(mw...)
}

// WithMiddleware wraps the handler in mw, inside the middleware of
// [Queue.Use] (see there for the order). It panics on a nil middleware.
func WithMiddleware(mw ...func(Handler) Handler) HandlerOption {
	checkMiddleware("WithMiddleware", mw)
	return func(h *handler) { h.middleware = append(h.middleware, mw...) }
}

// checkMiddleware panics on a nil middleware: a mistake in the program.
func checkMiddleware(call string, mw []func(Handler) Handler) {
	for _, m := range mw {
		if m == nil {
			panic("litequeue: " + call + " with a nil middleware")
		}
	}
}

// composed is a handler wrapped in the first n middleware of Use: Use
// only appends, so n names the list.
type composed struct {
	n  int
	fn Handler
}

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
