package litequeue

import (
	"fmt"
	"time"
)

// Per-kind limits: how many runs of a kind may run at once, and start in
// a window of time, counted across every process on the database in the
// claim's transaction (see gate.go). The running runs are the kind's jobs
// in state running; the starts are rows of litequeue_starts, which the
// claims prune as they age out of the window.

// limits are a handler's limits on its kind's runs; zero fields: none.
type limits struct {
	running    int           // MaxRunning's n
	rate       int           // RateLimit's n
	per        time.Duration // RateLimit's window
	runningSet bool          // MaxRunning was given
	rateSet    bool          // RateLimit was given
}

// check returns the first value of l out of its limits, named as
// litequeue.toml names it (see KindOptions); nil if none is.
func (l limits) check() *FieldError {
	switch {
	case l.runningSet && l.running < 1:
		return &FieldError{Field: "max_running", Value: l.running, Limit: 1, kind: underMinimum}
	case l.rateSet && l.rate < 1:
		return &FieldError{Field: "rate_limit", Value: l.rate, Limit: 1, kind: underMinimum}
	case l.rateSet && l.per < time.Millisecond:
		return &FieldError{Field: "rate_per", Value: l.per, Limit: time.Millisecond, kind: underMinimum}
	}
	return nil
}

// optionError says what check found, e, in the words of the HandlerOption
// that set it, for Handle.
func (l limits) optionError(e *FieldError) string {
	switch e.Field {
	case "max_running":
		return fmt.Sprintf("MaxRunning(%d): n must be at least %v", l.running, e.Limit)
	case "rate_limit":
		return fmt.Sprintf("RateLimit(%d, %v): n must be at least %v", l.rate, l.per, e.Limit)
	}
	return fmt.Sprintf("RateLimit(%d, %v): per must be at least %v", l.rate, l.per, e.Limit)
}

// limited reports whether l limits anything.
func (l limits) limited() bool { return l.running > 0 || l.rate > 0 }

// LimitStats is how much of a kind's limits is in use, as [Queue.Limits]
// reads it: the limits of this Queue's handler of the kind ([MaxRunning]
// and [RateLimit], or [Options.Kinds]), and what they count, which is
// the runs of every process on the database.
type LimitStats struct {
	Kind       string
	MaxRunning int           // at most this many runs at once; 0: no such limit
	Running    int           // the kind's running jobs
	RateLimit  int           // at most this many starts in any window of RatePer; 0: no such limit
	RatePer    time.Duration // the window of RateLimit
	Starts     int           // the kind's starts in the window that ends at the read; 0 without RateLimit
}
