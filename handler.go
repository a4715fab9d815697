package litequeue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Handler runs one job. Returning nil completes it; any other error is a
// failed attempt, retried with backoff (see [Permanent], [RetryAfter],
// [Snooze] and [ErrDiscard] for the other endings). A panic is recovered
// and counts as a failure with its stack in the history. ctx is cancelled
// when the handler's timeout passes (ctx.Deadline reports it; see
// [WithTimeout]), when the job is cancelled, when the worker loses the
// lease, and at the end of a shutdown's grace period.
type Handler func(ctx context.Context, job *Job) error

// HandlerOption configures one kind's handler in [Queue.Handle].
type HandlerOption func(*handler)

type handler struct {
	fn         Handler // in its own middleware; see Queue.runner
	composed   atomic.Pointer[composed]
	composing  sync.Mutex // one run composes at a time
	policyName string
	policy     Policy
	timeout    time.Duration
	expiry     time.Duration // of WithExpiry; 0: none
	expirySet  bool
	middleware []func(Handler) Handler // of WithMiddleware
	limits     limits                  // of MaxRunning and RateLimit; see limits.go
	breaker    *Breaker                // of WithBreaker, resolved; nil: none
}

// composed is a handler wrapped in the first n middleware of Use: Use
// only appends, so n names the list.
type composed struct {
	n  int
	fn Handler
}

// UsePolicy makes the handler use the named policy from [Options.Policies]
// instead of [Options.Retry]. [Queue.Handle] panics if the name is unknown.
func UsePolicy(name string) HandlerOption {
	return func(h *handler) { h.policyName = name }
}

// WithTimeout bounds each run of the handler to d on the injected clock:
// past it the run is recorded as timed_out (a failed try), its context is
// cancelled, and whatever it returns later is discarded. 0, the default,
// means no timeout.
//
// The handler's ctx.Deadline() reports the run's start plus d, read from
// the injected clock: with the real clock, the wall-clock deadline. Under a
// mock clock it lies on the mock's timeline, and code that compares it with
// the wall clock ([context.WithTimeout], net.Dialer, [time.Until]) sees it
// wherever the mock stands, perhaps long past or far ahead; the
// cancellation still comes when the mock passes the deadline.
func WithTimeout(d time.Duration) HandlerOption {
	return func(h *handler) { h.timeout = d }
}

// gated reports whether the gate counts the runs of h's kind: it has a
// limit or a breaker.
func (h *handler) gated() bool { return h.limits.limited() || h.breaker != nil }

// resolve checks h's kind limits, in the one order of Handle and of
// Options.Kinds (MaxRunning and RateLimit, the expiry, the breaker), and
// fills in its breaker's zero fields. Its error is named as litequeue.toml
// names the field (see optionError for Handle's words).
func (h *handler) resolve() *kindError {
	if err := h.limits.check(); err != nil {
		return &kindError{Err: err}
	}
	if err := h.checkExpiry(); err != nil {
		return &kindError{Err: err}
	}
	if h.breaker != nil {
		b, err := h.breaker.resolve()
		if err != nil {
			return &kindError{Table: "breaker", Err: err}
		}
		h.breaker = &b
	}
	return nil
}

// optionError states e, an error of resolve, in the words of the
// HandlerOption that set the field.
func (h *handler) optionError(e *kindError) string {
	switch {
	case e.Table == "breaker":
		return fmt.Sprintf("WithBreaker: %v", e.Err.goNamed())
	case e.Err.Field == "expire_after":
		return fmt.Sprintf("WithExpiry %v must be positive", e.Err.Value)
	}
	return h.limits.optionError(e.Err)
}

// JSON adapts a function of a decoded payload into a [Handler]. A payload
// that does not decode into T is a [Permanent] failure: the job goes to
// dead at once with the decode error in its history.
func JSON[T any](fn func(ctx context.Context, job *Job, args T) error) Handler {
	return func(ctx context.Context, job *Job) error {
		var args T
		if err := job.Decode(&args); err != nil {
			return Permanent(err)
		}
		return fn(ctx, job, args)
	}
}

// WithBreaker gives the handler a circuit breaker (see [Breaker]). A
// handler has none unless it is given one: a breaker that trips where none
// was asked for would surprise, holding back jobs whose retries the program
// counts on. [Queue.Handle] panics on a field out of its limits:
// [Breaker.Failures] ≥ 1, [Breaker.Ratio] in (0, 1], [Breaker.Window] > 0,
// [Breaker.Cooldown] > 0, [Breaker.MaxCooldown] ≥ Cooldown (zero fields
// take their defaults first).
//
// The breaker's state is kept in the database and shared by the Queues
// on it whose handler of the kind has a breaker: one opens it, and none
// claims more of the kind while it is open (what each already claimed
// still runs). Give every process the same options:
// a [Queue] whose handler has none claims the kind as if it had no breaker
// (and so pays nothing for the feature), though it still counts a lost
// probe that it rescues.
func WithBreaker(b Breaker) HandlerOption {
	return func(h *handler) { h.breaker = &b }
}

// MaxRunning lets at most n runs of the handler's kind run at once, across
// every process and [Queue] on the database: MaxRunning(1) makes the kind's
// runs take turns, a mutex for the kind. Jobs that [Queue.Work] has leased
// ahead of a free slot count as running, and so does the run of a worker
// that died, until its lease expires and it is rescued. A run counts while
// its job is running: once [Queue.CompleteTx] has committed it, or its
// timeout has recorded it timed out (see [WithTimeout]), the next run may
// start while that handler has not yet returned. Workers with free slots
// take other kinds meanwhile, and an idle one looks again when a run ends.
// Each process declares its own handlers, so every process that handles the
// kind should declare the same limit: a process that declares none, or a
// higher one, starts runs up to its own. [Queue.Handle] panics if n < 1.
func MaxRunning(n int) HandlerOption {
	return func(h *handler) { h.limits.running, h.limits.runningSet = n, true }
}

// RateLimit lets at most n runs of the handler's kind start in any window
// of length per on the injected clock (a sliding window, to the
// millisecond), across every process and [Queue] on the database. A start
// is a run's claim, counted in the claim's transaction: each try of a job
// is one, and a job that [Queue.Work] leased ahead of a free slot counts
// from its claim, so its handler may begin a little later. Once n runs
// started within per, the kind's jobs wait, and idle workers wake when the
// oldest of those starts leaves the window. As with [MaxRunning], every
// process that handles the kind should declare the same limit. A clock set
// back forgets the starts that lie after it. [Queue.Handle] panics if n < 1
// or per < 1ms.
func RateLimit(n int, per time.Duration) HandlerOption {
	return func(h *handler) { h.limits.rate, h.limits.per, h.limits.rateSet = n, per, true }
}

// WithExpiry gives every job of the handler's kind that this [Queue]
// enqueues, with [Queue.Enqueue], [Queue.EnqueueMany] or [Queue.EnqueueTx]
// after [Queue.Handle], the expiry of [ExpireAfter](d), unless the call
// gives its own. It is named apart from ExpireAfter because a
// [HandlerOption] and an [EnqueueOption] are different types; it reads as
// [WithTimeout] does. Jobs enqueued by another Queue, or before Handle,
// keep what their enqueue gave them. Handle panics on a d that is not
// positive.
func WithExpiry(d time.Duration) HandlerOption {
	return func(h *handler) { h.expiry, h.expirySet = d, true }
}

// checkExpiry refuses a WithExpiry that is not positive.
func (h *handler) checkExpiry() *FieldError {
	if h.expirySet && h.expiry <= 0 {
		return &FieldError{Field: "expire_after", Value: h.expiry, Limit: time.Duration(0), kind: notPositive}
	}
	return nil
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

// kindError reports a kind of Options.Kinds that Open and LoadConfig
// refuse: a field out of its limits, found checking the table Table
// ("" for the kind's own fields, "breaker" for those of its Breaker).
type kindError struct {
	Kind  string
	Table string
	Err   *FieldError
}

// path returns the key of the table the error is about, as litequeue.toml
// has it.
func (e *kindError) path() []string {
	if e.Table == "" {
		return []string{"kinds", e.Kind}
	}
	return []string{"kinds", e.Kind, e.Table}
}

func (e *kindError) Error() string { return fmt.Sprintf("%s: %v", dotted(e.path()), e.Err) }

func (e *kindError) Unwrap() error { return e.Err }
