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

// Handle registers h for jobs of the given kind. Only kinds with a handler
// on this [Queue] are claimed by its [Queue.Work] and [Queue.RunDue]; a
// kind registered while Work runs is claimed from then on, its due jobs at
// once. Handle panics, like http.ServeMux, on a kind that is not a name
// (see [NameLimit]), a nil handler,
// a kind that already has one, an unknown policy name, a negative timeout,
// a [WithExpiry] that is not positive, a limit out of range ([MaxRunning],
// [RateLimit]) or a [Breaker] out of its limits: these are mistakes in the
// program, not in its data.
//
// The handler starts from the kind's entry in [Options.Kinds], if any (see
// [KindOptions]), and opts are applied after it, so each of them wins over
// the field it sets: MaxRunning(3) over the entry's
// [KindOptions.MaxRunning], leaving its [KindOptions.RateLimit],
// [KindOptions.ExpireAfter] and [KindOptions.Breaker] in force; a
// [WithBreaker] replaces the entry's Breaker as a whole.
func (q *Queue) Handle(kind string, h Handler, opts ...HandlerOption) {
	if kind == "" {
		panic("litequeue: Handle with an empty kind")
	}
	if err := checkName("kind", kind); err != nil {
		panic("litequeue: Handle: " + err.Error())
	}
	if h == nil {
		panic(fmt.Sprintf("litequeue: Handle(%q) with a nil handler", kind))
	}
	hd := &handler{fn: h}
	for _, o := range append(q.opts.Kinds[kind].options(), opts...) {
		o(hd)
	}
	policy, err := q.policy(hd.policyName)
	if err != nil {
		panic(fmt.Sprintf("litequeue: Handle(%q): %v", kind, err))
	}
	hd.policy = policy
	hd.fn = compose(h, hd.middleware)
	if hd.timeout < 0 {
		panic(fmt.Sprintf("litequeue: Handle(%q): negative timeout %v", kind, hd.timeout))
	}
	if err := hd.resolve(); err != nil {
		panic(fmt.Sprintf("litequeue: Handle(%q): %s", kind, hd.optionError(err)))
	}
	if !q.reg.add(kind, hd) {
		panic(fmt.Sprintf("litequeue: Handle(%q) twice", kind))
	}
	q.wake.fire() // idle Work loops look again, now for this kind too
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

// policy returns the named policy, or Options.Retry for "".
func (q *Queue) policy(name string) (Policy, error) {
	if name == "" {
		return q.opts.Retry, nil
	}
	p, ok := q.opts.Policies[name]
	if !ok {
		return Policy{}, fmt.Errorf("unknown policy %q (Options.Policies has %v)", name, sortedKeys(q.opts.Policies))
	}
	return p, nil
}

// A registry holds the handlers of a Queue by kind. Handle only adds
// kinds. It is safe for concurrent use.
type registry struct {
	mu         sync.RWMutex
	handlers   map[string]*handler
	middleware []func(Handler) Handler // of Use; only appended to
}

func newRegistry() *registry { return &registry{handlers: make(map[string]*handler)} }

// add registers h for kind, and reports false, adding nothing, if kind
// has a handler already.
func (r *registry) add(kind string, h *handler) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.handlers[kind]; dup {
		return false
	}
	r.handlers[kind] = h
	return true
}

// use adds middleware that wraps every kind's handler.
func (r *registry) use(mw ...func(Handler) Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.middleware = append(r.middleware, mw...)
}

// get returns the handler of kind, or nil.
func (r *registry) get(kind string) *handler {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.handlers[kind]
}

// count returns how many kinds have a handler. Handle only adds kinds,
// so a Work loop that saw the same number saw the same kinds.
func (r *registry) count() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.handlers)
}

// kinds returns the kinds with a handler, sorted.
func (r *registry) kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return sortedKeys(r.handlers)
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
