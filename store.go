package litequeue

import (
	"context"
	"errors"

	"github.com/litequeue/litequeue/internal/store"
)

// A decision (see decide.go) is stored here, in one place, outside the
// settle of a batch's run ends (see store.Writer.settle): the job's row,
// then its history row.

// storeDecision writes the decision d in tx: the job's row, unless d keeps it, and
// its history row, if it has one. The caller has checked that it may: it
// holds the lease, the lease expired, or the job is in a state the act
// applies to.
func storeDecision(ctx context.Context, tx store.Execer, d *decision) error {
	if err := storeRow(ctx, tx, d); err != nil {
		return err
	}
	return store.AddHistoryRow(ctx, tx, d.history)
}

// storeRow is storeDecision without the history row.
func storeRow(ctx context.Context, tx store.Execer, d *decision) error {
	if d.keep {
		return nil
	}
	return store.SetRow(ctx, tx, &d.after)
}

// holder reads the row of job — a leased job, as its handler got it — and
// checks that the lease token is still the current one on a running job;
// else ErrLeaseLost. A job already completed under the same token
// (CompleteTx) is reported through done.
//
// An ID names one job for good: it is never given to another job, also
// after retention purged the job (litequeue_jobs.id is AUTOINCREMENT since
// schema version 3), so a worker paused for longer than the retention finds
// no row. CreatedAt is compared as well, as the settle's fence does (see store.SetHeldRow): a file
// migrated from version 2 may hold a job that got the ID of a job purged
// before the upgrade.
func holder(ctx context.Context, tx store.Execer, job *Job) (row *store.JobRow, done bool, err error) {
	row, err = store.LockJob(ctx, tx, job.ID)
	if err != nil {
		if errors.Is(err, store.ErrNoRows) {
			return nil, false, ErrLeaseLost
		}
		return nil, false, err
	}
	switch {
	case row.Token != job.token || row.CreatedAt != store.MS(job.CreatedAt):
		return nil, false, ErrLeaseLost
	case State(row.State) == Completed:
		return row, true, nil
	case State(row.State) != Running:
		return nil, false, ErrLeaseLost
	}
	return row, false, nil
}
