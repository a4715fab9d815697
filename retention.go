package litequeue

import (
	"fmt"
	"strings"
	"time"
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

// resolveRetention validates the rules of o.Retention and returns a copy
// in which their zero fields hold o's values (filled in already).
func (o *Options) resolveRetention() ([]Retention, error) {
	if len(o.Retention) == 0 {
		return nil, nil
	}
	rules := make([]Retention, len(o.Retention))
	seen := make(map[[2]string]int, len(o.Retention))
	for i, r := range o.Retention {
		fail := func(field string, err error) ([]Retention, error) {
			return nil, &ruleError{Index: i, Field: field, Err: err}
		}
		switch j, dup := seen[[2]string{r.Queue, r.Kind}]; {
		case r.Queue == "" && r.Kind == "":
			return fail("", fmt.Errorf("names neither a queue nor a kind (Options.KeepFinished and DeadTTL are the rule for every job)"))
		case dup:
			return fail("", fmt.Errorf("%s, as rule %d does", r.names(), j))
		case r.KeepFinished == 0 && r.DeadTTL == 0:
			return fail("", fmt.Errorf("%s sets neither KeepFinished nor DeadTTL", r.names()))
		}
		seen[[2]string{r.Queue, r.Kind}] = i
		if err := checkTTL("keep_finished", r.KeepFinished); err != nil {
			return fail(err.Field, err)
		}
		if err := checkTTL("dead_ttl", r.DeadTTL); err != nil {
			return fail(err.Field, err)
		}
		if r.KeepFinished == 0 {
			r.KeepFinished = o.KeepFinished
		}
		if r.DeadTTL == 0 {
			r.DeadTTL = o.DeadTTL
		}
		rules[i] = r
	}
	return rules, nil
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

// match is the SQL condition for the jobs r names, with its arguments.
func (r Retention) match() (string, []any) {
	switch r.rank() {
	case 3:
		return "(queue = ? AND kind = ?)", []any{r.Queue, r.Kind}
	case 2:
		return "kind = ?", []any{r.Kind}
	}
	return "queue = ?", []any{r.Queue}
}

// A keepClass is the finished jobs one pair of TTLs applies to: those
// that cond, fixed SQL with ? parameters args, matches ("" for all).
type keepClass struct {
	cond                  string
	args                  []any
	keepFinished, deadTTL time.Duration
}

// keepClasses splits the jobs by the rule that applies to them: for each
// rule, the jobs it matches and no more specific rule does; then the jobs
// no rule matches, kept for the defaults.
func keepClasses(rules []Retention, keepFinished, deadTTL time.Duration) []keepClass {
	classes := make([]keepClass, 0, len(rules)+1)
	for _, r := range rules {
		cond, args := r.match()
		for _, s := range rules {
			if s.rank() > r.rank() && r.overlaps(s) {
				c, a := s.match()
				cond, args = cond+" AND NOT "+c, append(args, a...)
			}
		}
		classes = append(classes, keepClass{cond: cond, args: args, keepFinished: r.KeepFinished, deadTTL: r.DeadTTL})
	}
	var others []string
	var args []any
	for _, r := range rules {
		c, a := r.match()
		others, args = append(others, "NOT "+c), append(args, a...)
	}
	return append(classes, keepClass{cond: strings.Join(others, " AND "), args: args, keepFinished: keepFinished, deadTTL: deadTTL})
}
