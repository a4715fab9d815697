package litequeue

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Bulk acts that a person confirms (see dead.go): a count, a Tally, then
// the act on what was counted. Beside the replay and the purge of dead
// jobs, a cancel of pending or running jobs and a delete of finished ones
// by a Filter, as [Queue.Cancel] and [Queue.Delete] do one job.

// actBatch bounds the jobs one transaction of a bulk replay, cancel or
// delete acts on, so that a large act never holds the write lock for
// long.
const actBatch = 500

// TallyCancel counts the jobs that [Queue.CancelTallied] would cancel now
// for f, for a person to confirm. f.State must be [Pending], [Waiting] or [Running]:
// a filter that selects by queue, kind, ID bounds and error text alone
// would count finished jobs too, which a cancel leaves alone.
func (q *Queue) TallyCancel(ctx context.Context, f Filter) (Tally, error) {
	return q.tallyOf(ctx, "count jobs to cancel", f, cancellable)
}

// CancelTallied cancels, as [Queue.Cancel] does each job, the jobs of f
// that a person confirmed from t, a [Queue.TallyCancel] of the same f:
// those that match with an ID of at most t.MaxID, and only if they are
// t.Jobs when it starts. Else it cancels none and returns a [*TallyError]
// with their number now. It works in transactions of at most 500 jobs, and
// after each fires job.cancelled for the pending and waiting jobs cancelled; a running
// job is asked to stop, as Cancel asks it. A job that finished by its
// turn is left alone. It returns how many jobs it cancelled or asked to
// stop, also when it fails part way: the transactions before the failure
// stand.
func (q *Queue) CancelTallied(ctx context.Context, f Filter, t Tally) (int, error) {
	return q.actTallied(ctx, "cancel jobs", f, &t, cancellable, func(ctx context.Context, ids []int64) (int, error) {
		var running []int64
		n, err := q.acts.onEach(ctx, ids, false, cancelAct(ctx, q.st, &running))
		if err == nil {
			q.renewAll(running)
		}
		return n, err
	})
}

// cancellable checks f, a filter of jobs to cancel.
func cancellable(f Filter) (Filter, error) {
	if f.State != Pending && f.State != Running && f.State != Waiting {
		return f, fmt.Errorf("the filter's state is %q, not pending, waiting or running", f.State)
	}
	return f, nil
}

// TallyDelete counts the jobs that [Queue.DeleteTallied] would delete now
// for f, for a person to confirm. f.State must be a finished state
// ([Completed], [Discarded], [Cancelled], [Expired]) or [Dead].
func (q *Queue) TallyDelete(ctx context.Context, f Filter) (Tally, error) {
	return q.tallyOf(ctx, "count jobs to delete", f, deletable)
}

// DeleteTallied deletes, as [Queue.Delete] does each job, with their
// history, the jobs of f that a person confirmed from t, a
// [Queue.TallyDelete] of the same f: those that match with an ID of at
// most t.MaxID, and only if they are t.Jobs when it starts. Else it
// deletes none and returns a [*TallyError] with their number now. It works
// in transactions of at most 500 jobs, and after each fires job.deleted
// for each job. A job gone by its turn, or replayed, is left alone. It
// returns how many jobs it deleted, also when it fails part way: the
// transactions before the failure stand.
func (q *Queue) DeleteTallied(ctx context.Context, f Filter, t Tally) (int, error) {
	return q.actTallied(ctx, "delete jobs", f, &t, deletable, func(ctx context.Context, ids []int64) (int, error) {
		del := deleteAct(ctx)
		return q.acts.onEach(ctx, ids, false, func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error) {
			if State(row.State) != f.State { // replayed, and finished otherwise, since the count
				return Event{}, &stateError{op: "delete", id: row.ID, state: State(row.State)}
			}
			return del(tx, row, now)
		})
	})
}

// deletable checks f, a filter of jobs to delete.
func deletable(f Filter) (Filter, error) {
	if f.State == "" || !f.State.terminal() {
		return f, fmt.Errorf("the filter's state is %q, not completed, dead, discarded, cancelled or expired", f.State)
	}
	return f, nil
}

// tallyOf counts the jobs of f, as valid checks and completes it, for the
// act op.
func (q *Queue) tallyOf(ctx context.Context, op string, f Filter, valid func(Filter) (Filter, error)) (Tally, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return Tally{}, err
	}
	defer leave()
	if f, err = validated(f, valid); err != nil {
		return Tally{}, fmt.Errorf("litequeue: %s: %w", op, err)
	}
	jobs, maxID, err := store.TallyJobs(ctx, q.st.reads, f.stored())
	if err != nil {
		return Tally{}, fmt.Errorf("litequeue: %s: %w", op, err)
	}
	return Tally{Jobs: jobs, MaxID: maxID}, nil
}

// actTallied runs op, batch after batch of at most actBatch job IDs, on
// the jobs of f, as valid checks and completes it, counted by t (nil: all
// of them).
func (q *Queue) actTallied(ctx context.Context, op string, f Filter, t *Tally, valid func(Filter) (Filter, error), batch func(context.Context, []int64) (int, error)) (int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if f, err = validated(f, valid); err != nil {
		return 0, fmt.Errorf("litequeue: %s: %w", op, err)
	}
	return q.inBatches(ctx, op, f, t, batch)
}

// validated returns f checked, then as valid checks and completes it.
func validated(f Filter, valid func(Filter) (Filter, error)) (Filter, error) {
	if err := f.check(); err != nil {
		return f, err
	}
	return valid(f)
}

// inBatches reads the IDs of the jobs of f, checked, those up to
// t.MaxID and only if they are t.Jobs (t nil: all of them), and calls
// batch on them, actBatch at a time, reporting the progress (WithProgress).
// It returns how many jobs the batches acted on; its errors name op, but
// for a *TallyError.
func (q *Queue) inBatches(ctx context.Context, op string, f Filter, t *Tally, batch func(context.Context, []int64) (int, error)) (int, error) {
	var err error
	if t != nil {
		f, err = t.bound(f)
	}
	if err != nil {
		return 0, fmt.Errorf("litequeue: %s: %w", op, err)
	}
	ids, err := store.JobIDs(ctx, q.st.reads, f.stored())
	if err != nil {
		return 0, fmt.Errorf("litequeue: %s: %w", op, err)
	}
	if t != nil && len(ids) != t.Jobs {
		return 0, &TallyError{Want: t.Jobs, Got: len(ids)}
	}
	acted, done := 0, 0
	for chunk := range slices.Chunk(ids, actBatch) {
		n, err := batch(ctx, chunk)
		acted += n
		if err != nil {
			return acted, fmt.Errorf("litequeue: %s: %w", op, err)
		}
		done += len(chunk)
		progress(ctx, done, len(ids))
	}
	return acted, nil
}
