package litequeue

import (
	"context"
	"errors"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// A decision (see decide.go) is stored here, in one place: the job's row,
// then its history row.
//
// The ends of the runs that one writer batch commits are stored together:
// each is decided on its own (decide), their job rows are written, each
// fenced by its run's lease (storeHeld), and then their history rows, by
// as few statements as the engine can (see addHistory): a statement costs
// the file several times the row it writes, and a drain commits a batch
// of ends per fsync.
//
// A run whose fence finds its row changed since the claim is decided
// again on the row as it is (see settleChanged), on its own.

// A runEnd asks the writer to store how the run of its lease ended, with
// the other ends of its batch, and to claim the worker's next job in the
// same transaction (see Queue.serve). It is a writeOp's join.
type runEnd struct {
	l    *lease
	e    end
	next *claimAsk // nil: no next job

	// Set by settleRuns afresh at each try of the batch.
	d      decision
	events []Event // the gate's, of the stored decision (see Queue.ran)
	err    error   // ErrLeaseLost: the run had lost its lease, and nothing of it was written
}

// serve is the writer's perBatch: each join is a *runEnd. It stores the
// ends of the batch's runs, then claims the next jobs their workers ask
// for, so that the jobs the ends freed up (a kind's MaxRunning) count as
// free.
func (q *Queue) serve(ctx context.Context, tx store.Execer, joins []any) error {
	now := q.now()
	ends := make([]*runEnd, len(joins))
	var asks []*claimAsk
	for i, j := range joins {
		re := j.(*runEnd)
		ends[i] = re
		if re.next != nil {
			asks = append(asks, re.next)
		}
	}
	if err := q.settleRuns(ctx, tx, ends, now); err != nil {
		return err
	}
	return q.serveClaims(ctx, tx, asks, now)
}

// settleRuns stores the ends of runs at time now in tx: their job rows,
// their history rows, and what the gate counts of them.
func (q *Queue) settleRuns(ctx context.Context, tx store.Execer, ends []*runEnd, now time.Time) error {
	var history []*store.HistoryRow
	for _, re := range ends {
		re.d, re.events, re.err = decide(&re.l.row, re.e, now), nil, nil
		held, err := store.SetHeldRow(ctx, tx, &re.l.row, &re.d.after)
		if err == nil && !held {
			err = q.settleChanged(ctx, tx, re, now)
		}
		if err != nil {
			return err
		}
		if re.err != nil {
			continue
		}
		if re.d.history != nil {
			history = append(history, re.d.history)
		}
		if !re.d.keep && State(re.d.after.State) == Pending {
			q.st.w.WakeOwn()
		}
	}
	if err := q.st.eng.AddHistory(ctx, tx, history); err != nil {
		return err
	}
	for _, re := range ends {
		if re.err != nil {
			continue
		}
		events, err := q.gate.ran(ctx, tx, &re.d, now)
		if err != nil {
			return err
		}
		re.events = events
	}
	return nil
}

// settleChanged decides the end re again on the job's row as it is, which
// changed since the claim: completed by CompleteTx under the same lease
// (the completion stands, and only the history row is added), or asked to
// stop by Cancel. It writes the row; settleRuns adds the history row. A
// lease lost meanwhile is re.err, and nothing is written.
func (q *Queue) settleChanged(ctx context.Context, tx store.Execer, re *runEnd, now time.Time) error {
	row, _, err := holder(ctx, tx, re.l.job)
	if errors.Is(err, ErrLeaseLost) {
		re.err = err
		return nil
	}
	if err != nil {
		return err
	}
	re.d = decide(row, re.e, now)
	return storeRow(ctx, tx, &re.d)
}

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

const jobByIDSQL = `SELECT ` + store.JobColumns + ` FROM litequeue_jobs WHERE id = ? /*FOR UPDATE*/`

// holder reads the row of job — a leased job, as its handler got it — and
// checks that the lease token is still the current one on a running job;
// else ErrLeaseLost. A job already completed under the same token
// (CompleteTx) is reported through done.
//
// An ID names one job for good: it is never given to another job, also
// after retention purged the job (litequeue_jobs.id is AUTOINCREMENT since
// schema version 3), so a worker paused for longer than the retention finds
// no row. CreatedAt is compared as well, as settleHeldSQL does: a file
// migrated from version 2 may hold a job that got the ID of a job purged
// before the upgrade.
func holder(ctx context.Context, tx store.Execer, job *Job) (row *store.JobRow, done bool, err error) {
	row = new(store.JobRow)
	if err := tx.GetContext(ctx, row, jobByIDSQL, job.ID); err != nil {
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
