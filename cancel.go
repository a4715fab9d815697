package litequeue

import (
	"context"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Cancel stops a job for good. A pending job — also one scheduled or
// waiting to retry — and a job waiting for its dependencies become
// cancelled at once, with no history row, and fire job.cancelled; the
// jobs that depend on it then follow their rules ([DependsOnRule]). For a running job Cancel records the request and
// returns nil: its holder cancels the handler's context at its next lease
// renewal and records the run as cancelled whatever the handler returns,
// unless the handler already committed [Queue.CompleteTx]; job.cancelled
// fires then, from the holder's [Queue]. A holder in another Queue, in this
// process or another, renews within a third of [Options.VisibilityTimeout];
// when this Queue holds the job, Cancel has it renew at once. Cancel
// returns [ErrNotFound] for an ID that names no job, and an error naming
// the state of a job that has already finished.
func (q *Queue) Cancel(ctx context.Context, id int64) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	var running []int64
	err = q.acts.on(ctx, "cancel", id, false, cancelAct(ctx, q.st, &running))
	if err == nil {
		q.renewAll(running)
	}
	return err
}

// cancelAct returns the act of a cancel on a job's row: a pending job is
// cancelled, and counted in the throughput of st's Queue, a running one
// asked to stop (its holder counts the end), its ID added to *running for
// renewAll after the commit; a finished job is a *stateError.
func cancelAct(ctx context.Context, st *storage, running *[]int64) func(store.Execer, *store.JobRow, time.Time) (Event, error) {
	return func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error) {
		switch State(row.State) {
		case Running:
			*running = append(*running, row.ID)
			return Event{}, store.RequestCancel(ctx, tx, row.ID)
		case Pending, Waiting:
			d := cancelPending(row, now)
			err := storeDecision(ctx, tx, &d)
			if err == nil {
				err = st.countEnd(ctx, tx, now, store.EndCancelled, 1)
			}
			if err == nil && State(row.State) == Waiting {
				err = store.StoppedWaiting(ctx, tx, row.ID)
			}
			return d.event, err
		}
		return Event{}, &stateError{op: "cancel", id: row.ID, state: State(row.State)}
	}
}

// renewAll has the runs of this Queue that hold the jobs with the given
// IDs renew their leases at once, to see a cancel.
func (q *Queue) renewAll(ids []int64) {
	for _, id := range ids {
		q.run.renewNow(id)
	}
}
