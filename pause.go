package litequeue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Pause and resume: an operator stops the claims of a queue or a kind
// until it is resumed. The state is a row of litequeue_paused, so every
// process on the database sees it; the gate (gate.go) reads it in each
// claim's transaction.

// Pause is a paused queue or kind, as [Stats] and [Queue.Paused] report it:
// exactly one of [Pause.Queue] and [Pause.Kind] is set.
type Pause struct {
	Queue string    // the paused queue; "" when a kind is paused
	Kind  string    // the paused kind; "" when a queue is paused
	Since time.Time // when it was paused first (a second pause keeps it)
}

// PauseQueue stops every process on the database from claiming jobs of the
// named queue until [Queue.ResumeQueue]. Runs in progress finish normally,
// as do jobs already claimed ([Queue.Work] leases a few ahead of its free
// slots); pending jobs, retries waiting included, keep their [Job.RunAt],
// and [Queue.Enqueue] still adds jobs to the queue. Pausing a paused queue
// changes nothing. A claim that began before the pause committed may still
// start one batch. A name that is not one (see [NameLimit]) is an error;
// on a [Queue] from [OpenReadOnly], PauseQueue returns [ErrReadOnly].
func (q *Queue) PauseQueue(ctx context.Context, name string) error {
	return q.pause(ctx, scopeQueue, name, true)
}

// PauseKind is [Queue.PauseQueue] for the jobs of one kind, in every queue.
func (q *Queue) PauseKind(ctx context.Context, kind string) error {
	return q.pause(ctx, scopeKind, kind, true)
}

// ResumeQueue lets the named queue be claimed again, and wakes the idle
// workers: those of this process at once, those of other processes on the
// file at their next check (≤ 1s), and, on PostgreSQL, every listening
// worker at once. Resuming a queue that is not paused changes nothing.
// Only an empty name is refused: a pause that a version before
// [NameLimit] made can be resumed.
func (q *Queue) ResumeQueue(ctx context.Context, name string) error {
	return q.pause(ctx, scopeQueue, name, false)
}

// ResumeKind is [Queue.ResumeQueue] for a kind paused with
// [Queue.PauseKind].
func (q *Queue) ResumeKind(ctx context.Context, kind string) error {
	return q.pause(ctx, scopeKind, kind, false)
}

// Paused lists what is paused: the queues, then the kinds, each sorted by
// name; never nil.
func (q *Queue) Paused(ctx context.Context) ([]Pause, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	rows, err := q.gate.pausedRows(ctx, q.st.reads)
	if err != nil {
		return nil, fmt.Errorf("litequeue: paused: %w", err)
	}
	return pausesOf(rows), nil
}

// pause pauses (paused) or resumes the queue or kind name of scope.
func (q *Queue) pause(ctx context.Context, scope, name string, paused bool) error {
	op := "resume"
	if paused {
		op = "pause"
	}
	if name == "" {
		return fmt.Errorf("litequeue: %s %s: the %s's name is empty", op, scope, scope)
	}
	if err := checkName(scope, name); paused && err != nil {
		return fmt.Errorf("litequeue: %s %s: %w", op, scope, err)
	}
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	return q.gate.setPaused(ctx, op, scope, name, paused)
}

// pausesOf is what is paused, as the rows of litequeue_paused say; never
// nil.
func pausesOf(rows []store.PauseRow) []Pause {
	ps := make([]Pause, len(rows))
	for i, r := range rows {
		ps[i].Since = store.FromMS(r.Since)
		if r.Scope == scopeQueue {
			ps[i].Queue = r.Name
		} else {
			ps[i].Kind = r.Name
		}
	}
	return ps
}

// ResetBreaker closes the circuit breaker of kind by hand, as a probe that
// completed would, so that its jobs are claimed again at once, and wakes
// the idle workers, as [Queue.ResumeKind] does. A breaker that is closed
// stays so. It fires no event. An empty kind is an error; on a [Queue] from
// [OpenReadOnly], ResetBreaker returns [ErrReadOnly].
func (q *Queue) ResetBreaker(ctx context.Context, kind string) error {
	if kind == "" {
		return errors.New("litequeue: reset breaker: the kind's name is empty")
	}
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var closed bool
	err = q.st.write(ctx, func(tx store.Execer) error {
		if err := q.st.eng.LockKey(ctx, tx, "kind", kind); err != nil {
			return err
		}
		if closed, err = store.CloseBreaker(ctx, tx, kind, store.MS(q.now())); err != nil || !closed {
			return err
		}
		return q.st.w.WakeIdle(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("litequeue: reset breaker %q: %w", kind, err)
	}
	if closed {
		q.gate.opened()
	}
	return nil
}
