package litequeue

import (
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// KeepForever, as [Options.KeepFinished], [Options.DeadTTL] or a field of a
// [Retention] rule, keeps the jobs it is about for good: the janitor never
// purges them ([Queue.Delete] and [Queue.PurgeDead] still can).
// litequeue.toml writes it "forever". Zero keeps meaning the default; other
// negative durations are refused.
const KeepForever = time.Duration(-1)

// Retention is a rule of [Options.Retention]: how long the finished jobs of
// one queue, of one kind, or of one kind on one queue are kept, in place
// of [Options.KeepFinished] and [Options.DeadTTL]. A job follows the most
// specific rule that matches it — the one naming its kind and its queue,
// else the one naming its kind, else the one naming its queue — and,
// with none, the [Options]' values. A zero field of the rule that applies
// takes the Options' value, not that of a less specific rule.
type Retention struct {
	Queue string // "": any queue
	Kind  string // "": any kind

	// KeepFinished is how long completed, discarded, cancelled and expired
	// jobs are kept. 0: [Options.KeepFinished]; [KeepForever]: for good.
	KeepFinished time.Duration

	// DeadTTL is how long dead jobs are kept. 0: [Options.DeadTTL];
	// [KeepForever]: for good.
	DeadTTL time.Duration
}

// ruleError reports a rule of Options.Retention that Open and LoadConfig
// refuse. It wraps a *FieldError for a value out of its limits.
type ruleError struct {
	Index int    // in Options.Retention
	Field string // "keep_finished" or "dead_ttl" for a value; "" for the rule as a whole
	Err   error
}

func (e *ruleError) Error() string { return fmt.Sprintf("retention rule %d: %v", e.Index, e.Err) }

func (e *ruleError) Unwrap() error { return e.Err }

// checkTTL refuses a negative duration other than KeepForever.
func checkTTL(field string, d time.Duration) *FieldError {
	if d < 0 && d != KeepForever {
		return &FieldError{Field: field, Value: d, Limit: time.Duration(0), kind: isNegative}
	}
	return nil
}

// names says which jobs the rule is for.
func (r Retention) names() string {
	switch {
	case r.Kind == "":
		return fmt.Sprintf("queue %q", r.Queue)
	case r.Queue == "":
		return fmt.Sprintf("kind %q", r.Kind)
	}
	return fmt.Sprintf("kind %q on queue %q", r.Kind, r.Queue)
}

// rank orders rules by how specific they are: kind and queue, then
// kind, then queue.
func (r Retention) rank() int {
	switch {
	case r.Kind != "" && r.Queue != "":
		return 3
	case r.Kind != "":
		return 2
	}
	return 1
}

// overlaps reports whether a job can match both r and s.
func (r Retention) overlaps(s Retention) bool {
	return (r.Queue == "" || s.Queue == "" || r.Queue == s.Queue) && (r.Kind == "" || s.Kind == "" || r.Kind == s.Kind)
}

// scope names the jobs r is for.
func (r Retention) scope() store.Scope { return store.Scope{Queue: r.Queue, Kind: r.Kind} }

// A keepClass is the finished jobs one pair of TTLs applies to.
type keepClass struct {
	jobs                  store.Class
	keepFinished, deadTTL time.Duration
}

// keepClasses splits the jobs by the rule that applies to them: for each
// rule, the jobs it matches and no more specific rule does; then the jobs
// no rule matches, kept for the defaults.
func keepClasses(rules []Retention, keepFinished, deadTTL time.Duration) []keepClass {
	classes := make([]keepClass, 0, len(rules)+1)
	all := make([]store.Scope, 0, len(rules))
	for _, r := range rules {
		var specific []store.Scope
		for _, s := range rules {
			if s.rank() > r.rank() && r.overlaps(s) {
				specific = append(specific, s.scope())
			}
		}
		classes = append(classes, keepClass{jobs: store.ClassOf(r.scope(), specific...), keepFinished: r.KeepFinished, deadTTL: r.DeadTTL})
		all = append(all, r.scope())
	}
	return append(classes, keepClass{jobs: store.ClassOf(store.Scope{}, all...), keepFinished: keepFinished, deadTTL: deadTTL})
}
