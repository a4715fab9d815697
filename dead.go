package litequeue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Dead letters: a job that used its last try, or failed with Permanent, is
// dead with its whole history. Nothing runs it again on its own; List with
// Filter{State: Dead} shows the dead jobs, Replay and ReplayDead put them
// back, PurgeDead (or Delete, one at a time) deletes them early, and the
// janitor purges them after DeadTTL (see janitor.go).
//
// A replay or a purge of many is what a person confirms: a dashboard or a
// command counts the jobs, asks, then acts. Jobs that die, or grow old
// enough, in between must not be acted on unseen. So the count is a
// Tally (TallyReplay, TallyPurge), how many and the highest ID among
// them, and the act takes it back (ReplayTallied, PurgeTallied): it acts
// only on the jobs up to that ID, and only if they are still as many,
// else on none. The statement that checks their number also fixes the set
// acted on; the act then goes in the usual short transactions, each of
// which leaves alone a job that is no longer dead, so it may do less than
// was confirmed, never more.

// Replay puts a dead job back as pending, due now, with its [Job.Attempt]
// reset to 0 and [Job.FinishedAt] cleared; its history and [Job.LastError]
// are kept, and so is its [Job.Checkpoint], which its next run resumes
// from ([Queue.ResetCheckpoint] first, to start over). The replay appends
// a history row of its own (outcome replayed, Attempt 0, worker: the
// [Queue]'s default worker name), fires job.replayed and wakes this
// Queue's idle workers. It returns [ErrNotFound] for an ID
// that names no job, an error naming the state of a job that is not dead,
// and an error naming the key and the live job's ID while a pending or
// running job holds the dead job's [UniqueKey]: a replay never makes two
// live jobs with one key.
func (q *Queue) Replay(ctx context.Context, id int64) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	return q.acts.on(ctx, "replay", id, true, func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error) {
		if State(row.State) != Dead {
			return Event{}, &stateError{op: "replay", id: id, state: State(row.State)}
		}
		return q.acts.replay(ctx, tx, row, now)
	})
}

// ReplayDead replays, as [Queue.Replay] does, the dead jobs that
// [Queue.List] would return for f at the start of the call: those matching
// its [Filter.Queue], [Filter.Kind], ID bounds and [Filter.ErrorContains],
// the first [Filter.Limit] of them in f's order (Limit 0: all);
// [Queue.Count] tells how many beforehand. f.State must be "" or [Dead]. It
// works in transactions of at most 500 jobs, so that other writers
// (workers, enqueues) go on meanwhile, and after each wakes this Queue's
// workers and fires job.replayed. A job no longer dead by its turn is left
// alone, and a dead job whose [UniqueKey] a live job holds — also one
// replayed earlier in the same call — is skipped and stays dead (Replay
// would refuse it). ReplayDead returns how many jobs it replayed, also when
// it fails part way: the transactions before the failure stand.
func (q *Queue) ReplayDead(ctx context.Context, f Filter) (int, error) {
	return q.replayDead(ctx, f, nil)
}

// ReplayTallied replays, as [Queue.ReplayDead] does, the dead jobs of f
// that a person confirmed from t, a [Queue.TallyReplay] of the same f:
// those that match with an ID of at most t.MaxID, and only if they are
// t.Jobs when it starts. Else it replays none and returns a [*TallyError]
// with their number now. Jobs that die after the count, with a higher ID,
// are never among them; a job no longer dead by its turn is left alone,
// so it replays at most t.Jobs.
func (q *Queue) ReplayTallied(ctx context.Context, f Filter, t Tally) (int, error) {
	return q.replayDead(ctx, f, &t)
}

// replayDead is ReplayDead, or with t ReplayTallied.
func (q *Queue) replayDead(ctx context.Context, f Filter, t *Tally) (int, error) {
	return q.actTallied(ctx, "replay dead jobs", f, t, Filter.dead, q.acts.replayIDs)
}

// TallyReplay counts the dead jobs that [Queue.ReplayDead](ctx, f) would
// replay now, for [Queue.ReplayTallied]. f.State must be "" or [Dead].
func (q *Queue) TallyReplay(ctx context.Context, f Filter) (Tally, error) {
	return q.tallyOf(ctx, "count dead jobs", f, Filter.dead)
}

// dead returns f, a filter of dead jobs checked by validated, with its
// State set, or an error naming a state other than dead.
func (f Filter) dead() (Filter, error) {
	if f.State != "" && f.State != Dead {
		return f, fmt.Errorf("the filter's state is %s, not dead", f.State)
	}
	f.State = Dead
	return f, nil
}

// PurgeDead deletes, with their history, the dead jobs that have been dead
// for at least olderThan (FinishedAt ≤ now − olderThan on the injected
// clock; 0: every dead job), in transactions of at most 1000 rows, and
// returns how many it deleted. The janitor does the same with
// [Options.DeadTTL].
func (q *Queue) PurgeDead(ctx context.Context, olderThan time.Duration) (int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := checkAge(olderThan); err != nil {
		return 0, fmt.Errorf("litequeue: purge dead jobs: %w", err)
	}
	n, err := q.jan.purge(ctx, []State{Dead}, olderThan)
	if err != nil {
		return n, fmt.Errorf("litequeue: purge dead jobs: %w", err)
	}
	return n, nil
}

// CountDead returns how many jobs [Queue.PurgeDead](ctx, olderThan) would
// delete now: a dry run.
func (q *Queue) CountDead(ctx context.Context, olderThan time.Duration) (int, error) {
	t, err := q.TallyPurge(ctx, olderThan)
	return t.Jobs, err
}

// PurgeTallied deletes, as [Queue.PurgeDead] does, the jobs dead for at
// least olderThan that a person confirmed from t, a [Queue.TallyPurge] of
// the same age: those with an ID of at most t.MaxID, and only if they are
// t.Jobs when it starts (time may have made more old enough). Else it
// deletes none and returns a [*TallyError] with their number now. A job
// replayed meanwhile is left alone, so it deletes at most t.Jobs.
func (q *Queue) PurgeTallied(ctx context.Context, olderThan time.Duration, t Tally) (int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := checkAge(olderThan); err != nil {
		return 0, fmt.Errorf("litequeue: purge dead jobs: %w", err)
	}
	if err := t.check(); err != nil {
		return 0, fmt.Errorf("litequeue: purge dead jobs: %w", err)
	}
	cutoff := store.MS(q.now().Add(-olderThan))
	found, err := store.DeadUpTo(ctx, q.st.reads, cutoff, t.MaxID)
	if err != nil {
		return 0, fmt.Errorf("litequeue: purge dead jobs: %w", err)
	}
	if len(found) != t.Jobs {
		return 0, &TallyError{Want: t.Jobs, Got: len(found)}
	}
	purged, total := 0, len(found)
	for len(found) > 0 {
		ids := fitBatch(found, purgeBatch)
		n, err := q.jan.deleteBatch(ctx, ids, []string{string(Dead)}, cutoff)
		purged += n
		if err != nil {
			return purged, fmt.Errorf("litequeue: purge dead jobs: %w", err)
		}
		found = found[len(ids):]
		progress(ctx, total-len(found), total)
	}
	return purged, nil
}

// TallyPurge counts the jobs that [Queue.PurgeDead](ctx, olderThan) would
// delete now, for [Queue.PurgeTallied].
func (q *Queue) TallyPurge(ctx context.Context, olderThan time.Duration) (Tally, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return Tally{}, err
	}
	defer leave()
	if err := checkAge(olderThan); err != nil {
		return Tally{}, fmt.Errorf("litequeue: count dead jobs: %w", err)
	}
	jobs, maxID, err := store.TallyDead(ctx, q.st.reads, store.MS(q.now().Add(-olderThan)))
	if err != nil {
		return Tally{}, fmt.Errorf("litequeue: count dead jobs: %w", err)
	}
	return Tally{Jobs: jobs, MaxID: maxID}, nil
}

// checkAge refuses a negative age of dead jobs.
func checkAge(olderThan time.Duration) error {
	if olderThan < 0 {
		return fmt.Errorf("negative age %v", olderThan)
	}
	return nil
}

// Tally is how many jobs a bulk act would act on, and the highest ID
// among them, as [Queue.TallyReplay], [Queue.TallyPurge],
// [Queue.TallyCancel] and [Queue.TallyDelete] count them for a person to
// confirm; [Queue.ReplayTallied], [Queue.PurgeTallied],
// [Queue.CancelTallied] and [Queue.DeleteTallied] act on what it counted.
// The zero Tally counts none.
type Tally struct {
	Jobs  int   // how many
	MaxID int64 // the highest ID among them; 0 when Jobs is 0
}

// check returns an error naming a field of t that is negative.
func (t Tally) check() error {
	switch {
	case t.Jobs < 0:
		return fmt.Errorf("tally of %d jobs is negative", t.Jobs)
	case t.MaxID < 0:
		return fmt.Errorf("tally's highest ID %d is negative", t.MaxID)
	}
	return nil
}

// bound returns f limited to the IDs up to t's highest, after checking t.
func (t Tally) bound(f Filter) (Filter, error) {
	if err := t.check(); err != nil {
		return f, err
	}
	if t.MaxID < math.MaxInt64 && (f.Before == 0 || f.Before > t.MaxID+1) {
		f.Before = t.MaxID + 1
	}
	return f, nil
}

// TallyError is the error of [Queue.ReplayTallied], [Queue.PurgeTallied],
// [Queue.CancelTallied] and [Queue.DeleteTallied] when the jobs they would
// act on, those up to the tally's highest ID, are Got and not the Want the
// tally counted: jobs died, grew old enough, finished, or were replayed,
// cancelled or deleted since. They act on none; tally again and ask
// again.
type TallyError struct {
	Want, Got int
}

func (e *TallyError) Error() string {
	return fmt.Sprintf("litequeue: %d jobs match now, not the %d counted: nothing done", e.Got, e.Want)
}

// ResetCheckpoint deletes the checkpoint of the job with the given ID, so
// that its next run, after [Queue.Replay] for one, starts over; a job
// without one is left as it is. A running job's handler may save a new
// one. It returns [ErrNotFound] if no job has the ID.
func (q *Queue) ResetCheckpoint(ctx context.Context, id int64) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	err = q.st.write(ctx, func(tx store.Execer) error {
		if _, err := store.LockJob(ctx, tx, id); err != nil {
			return err
		}
		return store.DeleteCheckpoint(ctx, tx, id)
	})
	if errors.Is(err, store.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("litequeue: reset checkpoint of job %d: %w", id, err)
	}
	return nil
}
