package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Pause and resume: an operator stops the claims of a queue or a kind
// until it is resumed. The state is a row of litequeue_paused, so every
// process on the database sees it; the gate (gate.go) reads it in each
// claim's transaction.

// The scopes of litequeue_paused.
const (
	scopeQueue = "queue"
	scopeKind  = "kind"
)

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
	ps, err := q.gate.pauses(ctx, q.st.reads)
	if err != nil {
		return nil, fmt.Errorf("litequeue: paused: %w", err)
	}
	return ps, nil
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

// setPaused pauses (paused) or resumes the queue or kind name of scope,
// as op ("pause" or "resume") says.
func (g *gate) setPaused(ctx context.Context, op, scope, name string, paused bool) error {
	var changed bool
	err := g.st.write(ctx, func(tx store.Execer) (err error) {
		if paused {
			changed, err = store.Pause(ctx, tx, scope, name, store.MS(g.clock.Now()))
			return err
		}
		if changed, err = store.Resume(ctx, tx, scope, name); err != nil || !changed {
			return err
		}
		return g.st.w.WakeIdle(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("litequeue: %s %s %q: %w", op, scope, name, err)
	}
	if changed {
		g.logger.Info("litequeue: "+op+"d", scope, name)
		if !paused {
			g.opened()
		}
	}
	return nil
}

// pauses reads what is paused, in tx; never nil.
func (g *gate) pauses(ctx context.Context, tx store.Execer) ([]Pause, error) {
	rows, err := g.pausedRows(ctx, tx)
	if err != nil {
		return nil, err
	}
	ps := make([]Pause, len(rows))
	for i, r := range rows {
		ps[i].Since = store.FromMS(r.Since)
		if r.Scope == scopeQueue {
			ps[i].Queue = r.Name
		} else {
			ps[i].Kind = r.Name
		}
	}
	return ps, nil
}

// pausedRows reads litequeue_paused in tx; nothing from a file of an older
// schema opened read-only, which has no such table (see flowTables).
func (g *gate) pausedRows(ctx context.Context, tx store.Execer) ([]store.PauseRow, error) {
	if !g.st.info.Flow {
		return nil, nil
	}
	return store.Pauses(ctx, tx)
}

// pauseGate shuts the paused kinds and puts the paused queues in g.paused.
func (g *gate) pauseGate(ctx context.Context, tx store.Execer, a *admission, now time.Time, claiming bool) error {
	if !a.anyPaused {
		return nil
	}
	rows, err := g.pausedRows(ctx, tx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		switch r.Scope {
		case scopeQueue:
			a.paused = append(a.paused, r.Name)
		case scopeKind:
			a.shut(r.Name, time.Time{}) // until a resume, which writes
		}
	}
	return nil
}
