package litequeue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Dependencies: a job enqueued with [DependsOn] waits, in state [Waiting],
// until every job it depends on has completed, and then becomes pending
// in the same commit as the last of them. The machinery is in
// internal/store (deps.go): the edges, the count of open ones per waiting
// job, and what each dependency's end does to them (store.EdgeFate).

// DependencyRule says what a dependency's failure does to the job that
// depends on it: a dependency fails when it goes dead, is discarded,
// cancelled or expires, or is deleted before it completed.
type DependencyRule string

// The rules of [DependsOnRule] and [IfDependencyFails].
const (
	// CancelIfFailed cancels the dependent job, with a history row of
	// outcome cancelled whose error names the dependency and its state,
	// counted in [Queue.Throughput], and fires job.cancelled; the jobs
	// that depend on it are then treated alike, by their own rules. The
	// default. (A dependency ended in the app's own transaction, by
	// [Queue.CompleteTx], fires no event and counts nothing, as
	// EnqueueTx does not.)
	CancelIfFailed DependencyRule = store.RuleCancel
	// WaitIfFailed keeps the dependent job waiting while its dependency
	// is dead: a [Queue.Replay] of the dependency lets it go on once the
	// dependency completes. A dependency that can never complete — one
	// discarded, cancelled or expired (which no replay takes back), or
	// deleted, or purged by retention, while dead — cancels the
	// dependent, as CancelIfFailed does.
	WaitIfFailed DependencyRule = store.RuleWait
	// RunIfFailed counts the failed dependency as done: the dependent
	// runs once its other dependencies are done, and reads the failure
	// through [Queue.Dependencies].
	RunIfFailed DependencyRule = store.RuleRun
)

// dependencyRuleError is the error of a rule that is none of the rules.
func dependencyRuleError(r DependencyRule) error {
	return fmt.Errorf("dependency rule %q is not one of %q, %q, %q", r, CancelIfFailed, WaitIfFailed, RunIfFailed)
}

// valid reports whether r is one of the rules.
func (r DependencyRule) valid() bool {
	return r == CancelIfFailed || r == WaitIfFailed || r == RunIfFailed
}

// MaxDependencies bounds how many dependencies one job may have.
const MaxDependencies = 10_000

// DependsOn makes the job wait for the jobs with the given IDs to
// complete: it is enqueued [Waiting], never claimed while it waits, and
// becomes pending (due at its [Job.RunAt], or at once if that has passed)
// in the same commit as the last of them completes. A dependency that
// has completed already counts as done; one that failed applies the
// job's rule at once ([IfDependencyFails], default [CancelIfFailed]): the
// job is enqueued cancelled (its job.enqueued event shows it so; it is
// not counted as a cancel in [Queue.Throughput]).
//
// The enqueue writes each dependency's row (its count of dependents), so
// that an end committed at the same moment is not missed either way. On
// PostgreSQL that row lock lasts until the enqueue's transaction ends: in
// [Queue.EnqueueTx], the app's. Meanwhile the end of a run of that
// dependency waits for it, and with it the writes of the Queue that ran
// it, which share one transaction: keep such a transaction short, and do
// not call the Queue's own writes (Enqueue, Cancel, …) inside it, which
// would wait for themselves.
//
// The dependencies must exist when the job is enqueued: jobs enqueued
// earlier, or earlier in the same [Queue.EnqueueTx] transaction (a whole
// graph enqueued in one [Queue.WriteTx] commits, or not, as one). An ID
// that names no job is refused with [ErrNotFound]; so are more than
// [MaxDependencies] IDs, and a [UniqueKey] (a waiting job does not hold
// a key). As a job's ID is known only once it is enqueued, and it can
// depend only on jobs that exist, a graph never has a cycle. Given more
// than once, the IDs add up; an ID given twice counts once.
func DependsOn(ids ...int64) EnqueueOption {
	return DependsOnRule("", ids...)
}

// DependsOnRule is [DependsOn] with the rule for these dependencies' failure,
// whatever [IfDependencyFails] says for the job's others.
func DependsOnRule(rule DependencyRule, ids ...int64) EnqueueOption {
	return func(c *enqueueConfig) {
		for _, id := range ids {
			c.deps = append(c.deps, dependency{id: id, rule: rule})
		}
	}
}

// IfDependencyFails sets the rule for the failure of the job's
// dependencies given without one of their own. Default: [CancelIfFailed].
func IfDependencyFails(rule DependencyRule) EnqueueOption {
	return func(c *enqueueConfig) { c.depRule = rule }
}

// dependency is one ID of DependsOnRule, with its rule ("": the job's).
type dependency struct {
	id   int64
	rule DependencyRule
}

// storedDeps checks the dependencies of c and returns them as stored:
// each ID once (its first rule wins), sorted, each with its rule.
func (c *enqueueConfig) storedDeps() ([]store.Dep, error) {
	if c.depRule != "" && !c.depRule.valid() {
		return nil, dependencyRuleError(c.depRule)
	}
	if len(c.deps) == 0 {
		return nil, nil
	}
	if c.uniqueKey != "" {
		return nil, fmt.Errorf("UniqueKey %q with DependsOn: a waiting job holds no key", c.uniqueKey)
	}
	deps := make([]store.Dep, 0, len(c.deps))
	seen := make(map[int64]bool, len(c.deps))
	for _, d := range c.deps {
		rule := cmp.Or(d.rule, c.depRule, CancelIfFailed)
		if !rule.valid() {
			return nil, dependencyRuleError(rule)
		}
		if d.id <= 0 {
			return nil, fmt.Errorf("dependency ID %d is not a job's (IDs start at 1)", d.id)
		}
		if !seen[d.id] {
			seen[d.id] = true
			deps = append(deps, store.Dep{ID: d.id, Rule: string(rule)})
		}
	}
	if len(deps) > MaxDependencies {
		return nil, fmt.Errorf("%d dependencies is over the limit of %d (MaxDependencies)", len(deps), MaxDependencies)
	}
	slices.SortFunc(deps, func(a, b store.Dep) int { return cmp.Compare(a.ID, b.ID) })
	return deps, nil
}

// depend gives the batch's jobs, just inserted in tx at now, their
// dependencies, if any, and sets their state as it then is.
func (b *enqueueBatch) depend(ctx context.Context, tx store.Execer, jobs []*Job, now time.Time) error {
	if len(b.deps) == 0 {
		return nil
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	state, cause, err := store.Depend(ctx, tx, b.cfg.queue, b.kind, ids, b.deps, store.MS(now))
	if nf, ok := errors.AsType[*store.NotFoundError](err); ok {
		return fmt.Errorf("dependency %d: %w", nf.ID, ErrNotFound)
	}
	if err != nil {
		return err
	}
	for _, j := range jobs {
		j.State = State(state)
		if j.State == Cancelled {
			j.FinishedAt, j.LastError = store.FromMS(store.MS(now)), cause
		}
	}
	return nil
}

// Edge is one dependency between two jobs, as [Queue.Dependencies],
// [Queue.Dependents] and [Queue.Graph] show it.
type Edge struct {
	// Job is the job that waits; On, the job it depends on.
	Job, On int64
	Rule    DependencyRule
	// State is the edge's own: [EdgeOpen] until On completes or fails,
	// then [EdgeMet] or [EdgeFailed]; [EdgeDropped] if Job stopped
	// waiting first.
	State EdgeState
}

// EdgeState is how far an [Edge] is.
type EdgeState string

// The states of an [Edge].
const (
	EdgeOpen   EdgeState = store.EdgeOpen   // its dependency has not completed (nor failed, where the rule waits)
	EdgeMet    EdgeState = store.EdgeMet    // its dependency completed, or failed under [RunIfFailed]
	EdgeFailed EdgeState = store.EdgeFailed // its dependency failed, and the job was cancelled for it
	// EdgeDropped: the job stopped waiting before the dependency ended
	// (it was cancelled, by [Queue.Cancel] or for another edge), and the
	// edge no longer counts.
	EdgeDropped EdgeState = store.EdgeDropped
)

// A Node is a job of a [Graph], or the other end of an [Edge]: its ID,
// and, unless the job is gone (deleted, or purged by retention), its
// kind, queue and state.
type Node struct {
	ID      int64
	Gone    bool // no job has the ID any more
	Kind    string
	Queue   string
	State   State
	Attempt int
}

// A Dependency is an edge as one of its jobs sees it: the edge, and the
// job at its other end.
type Dependency struct {
	Edge  Edge
	Other Node
}

// Graph is the jobs connected to one job through dependencies, in
// either direction, and the edges between them.
type Graph struct {
	Nodes []Node // in ID order
	Edges []Edge // in the order of their Job, then their On
}

// MaxGraph bounds how many jobs [Queue.Graph] reads: twice the largest
// batch ([MaxDependencies] jobs and a callback).
const MaxGraph = 2 * MaxDependencies
