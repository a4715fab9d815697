package litequeue

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Dead letters: a job that used its last try, or failed with Permanent, is
// dead with its whole history. Nothing runs it again on its own; List with
// Filter{State: Dead} shows the dead jobs, Replay and ReplayDead put them
// back, PurgeDead (or Delete, one at a time) deletes them early, and the
// janitor purges them after DeadTTL (see janitor.go).

// replayBatch bounds the jobs one ReplayDead transaction replays, so that a
// large replay never holds the write lock for long.
const replayBatch = 500

// Replay puts a dead job back as pending, due now, with its [Job.Attempt]
// reset to 0 and [Job.FinishedAt] cleared; its history and [Job.LastError]
// are kept. The replay appends a history row of its own (outcome replayed,
// Attempt 0, worker: the [Queue]'s default worker name), fires job.replayed
// and wakes this Queue's idle workers. It returns [ErrNotFound] for an ID
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
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := f.check(); err != nil {
		return 0, fmt.Errorf("litequeue: replay dead jobs: %w", err)
	}
	if f.State != "" && f.State != Dead {
		return 0, fmt.Errorf("litequeue: replay dead jobs: the filter's state is %s, not dead", f.State)
	}
	f.State = Dead
	ids, err := store.JobIDs(ctx, q.st.reads, f.stored())
	if err != nil {
		return 0, fmt.Errorf("litequeue: replay dead jobs: %w", err)
	}
	replayed := 0
	for batch := range slices.Chunk(ids, replayBatch) {
		n, err := q.acts.replayIDs(ctx, batch)
		replayed += n
		if err != nil {
			return replayed, fmt.Errorf("litequeue: replay dead jobs: %w", err)
		}
	}
	return replayed, nil
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
	if olderThan < 0 {
		return 0, fmt.Errorf("litequeue: purge dead jobs: negative age %v", olderThan)
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
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if olderThan < 0 {
		return 0, fmt.Errorf("litequeue: count dead jobs: negative age %v", olderThan)
	}
	n, err := store.CountDead(ctx, q.st.reads, store.MS(q.now().Add(-olderThan)))
	if err != nil {
		return 0, fmt.Errorf("litequeue: count dead jobs: %w", err)
	}
	return n, nil
}
