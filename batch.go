package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Batches: a group of jobs and a callback job that depends on every one
// of them (see DependsOn), enqueued in one transaction.

// A Batch is a group of jobs and a callback job that runs once, when
// every job of the group has finished — whatever each ended as, or, with
// AllSucceeded, only if every one completed. The callback reads the
// group's ends with [Queue.DependencyCounts] (and their outputs with
// [Queue.DependencyOutputs]).
type Batch struct {
	Jobs     []BatchJob
	Callback BatchJob
	// AllSucceeded runs the callback only if every job of the group
	// completed: the first that fails (goes dead, is discarded, cancelled
	// or expires) cancels it, with a history row that names the job. By
	// default the callback runs once every job has ended.
	AllSucceeded bool
}

// A BatchJob is one job of a [Batch]: what [Queue.Enqueue] takes.
type BatchJob struct {
	Kind    string
	Payload any
	Options []EnqueueOption
}

// EnqueueBatch adds the batch's jobs, then its callback, depending on
// each of them (under [RunIfFailed], or [CancelIfFailed] with
// AllSucceeded, besides any dependencies its own options give), in one
// transaction: all are added or none. It returns the group's jobs, in
// their order, and the callback. It refuses what [Queue.Enqueue] refuses
// of any of them, a batch of no jobs and one of more than
// [MaxDependencies].
func (q *Queue) EnqueueBatch(ctx context.Context, b Batch) ([]*Job, *Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer leave()
	if n := len(b.Jobs); n == 0 || n > MaxDependencies {
		return nil, nil, fmt.Errorf("litequeue: enqueue batch: %d jobs is outside 1…%d (MaxDependencies)", n, MaxDependencies)
	}
	batches, err := q.enq.batches(ctx, q.kinds.enqueueCheck, append(b.Jobs[:len(b.Jobs):len(b.Jobs)], b.Callback))
	if err != nil {
		return nil, nil, fmt.Errorf("litequeue: enqueue batch: %w", err)
	}
	group, callback := batches[:len(b.Jobs)], batches[len(b.Jobs)]
	rule := RunIfFailed
	if b.AllSucceeded {
		rule = CancelIfFailed
	}
	var jobs []*Job
	var at time.Time
	err = q.st.write(ctx, func(tx store.Execer) error {
		jobs, at = jobs[:0], q.now()
		for _, g := range group {
			got, err := g.insert(ctx, tx, at)
			if err != nil {
				return fmt.Errorf("%s: %w", g.kind, err)
			}
			jobs = append(jobs, got...)
		}
		cb := *callback
		cb.cfg.deps = append(cb.cfg.deps[:len(cb.cfg.deps):len(cb.cfg.deps)], depsOn(rule, jobs)...)
		deps, err := cb.cfg.storedDeps()
		if err != nil {
			return fmt.Errorf("callback %s: %w", cb.kind, err)
		}
		cb.deps = deps
		got, err := cb.insert(ctx, tx, at)
		if err != nil {
			return fmt.Errorf("callback %s: %w", cb.kind, err)
		}
		jobs = append(jobs, got...)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("litequeue: enqueue batch: %w", err)
	}
	q.wake.fire()
	q.events.enqueued(at, jobs...)
	return jobs[:len(group)], jobs[len(group)], nil
}

// batches checks the jobs as EnqueueTx does one (see admitted), their
// kinds with checkKind, and returns their batches.
func (e *enqueuer) batches(ctx context.Context, checkKind func(context.Context, string) error, jobs []BatchJob) ([]*enqueueBatch, error) {
	batches := make([]*enqueueBatch, len(jobs))
	for i, j := range jobs {
		b, err := e.admitted(ctx, checkKind, j.Kind, j.Payload, j.Options)
		if err != nil {
			return nil, err
		}
		batches[i] = b
	}
	return batches, nil
}

// depsOn is a dependency on each of jobs, under rule.
func depsOn(rule DependencyRule, jobs []*Job) []dependency {
	deps := make([]dependency, len(jobs))
	for i, j := range jobs {
		deps[i] = dependency{id: j.ID, rule: rule}
	}
	return deps
}

// DependencyCounts counts the jobs that the job with the given ID
// depends on by their state: what a [Batch]'s callback reads of its
// group. A job that is gone (deleted, or purged by retention) counts
// under the empty State.
func (q *Queue) DependencyCounts(ctx context.Context, id int64) (map[State]int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	counts := map[State]int{}
	if !q.st.info.Dependencies {
		return counts, nil
	}
	rows, err := store.DependencyStates(ctx, q.st.reads, id)
	if err != nil {
		return nil, fmt.Errorf("litequeue: dependency counts of job %d: %w", id, err)
	}
	for _, r := range rows {
		counts[State(r.State)] += r.N
	}
	return counts, nil
}
