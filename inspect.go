package litequeue

import (
	"context"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue/internal/store"
)

// Filter selects jobs for [Queue.List], [Queue.Count] and
// [Queue.ReplayDead]. Zero fields match everything; [Filter.Limit] 0 means
// no limit. Results are ordered by ID, lowest first, or highest first with
// [Filter.Desc].
//
// [Filter.After] and [Filter.Before] bound the IDs, each excluded, so that
// a page of jobs is read from a cursor: the next page of a list ordered by
// Desc is Filter{Before: the last ID shown, Desc: true}, however many jobs
// the file holds. [Filter.ErrorContains] matches the jobs whose LastError
// contains its text; ASCII letters match either case.
//
// A [State] that is none of the constants, a negative Limit, After or
// Before, is an error.
type Filter struct {
	State         State
	Queue         string
	Kind          string
	Limit         int
	After         int64  // only jobs with an ID above After; 0: no bound
	Before        int64  // only jobs with an ID below Before; 0: no bound
	ErrorContains string // only jobs whose LastError contains this text; "": any
	UniqueKey     string // only jobs with this [Job.UniqueKey]; "": any
	// Metadata selects the jobs whose [Job.Metadata] holds every one of
	// its pairs, ASCII letters of either case matching as ErrorContains
	// does; nil: any.
	Metadata map[string]string
	Desc     bool // highest ID (newest) first
}

// check returns an error naming the field of f that is out of bounds.
func (f Filter) check() error {
	switch f.State {
	case "", Waiting, Pending, Running, Completed, Dead, Discarded, Cancelled, Expired:
	default:
		return fmt.Errorf("unknown state %q (want waiting, pending, running, completed, dead, discarded, cancelled or expired)", f.State)
	}
	switch {
	case f.Limit < 0:
		return fmt.Errorf("limit %d is negative (0: no limit)", f.Limit)
	case f.After < 0:
		return fmt.Errorf("after %d is negative (0: no bound)", f.After)
	case f.Before < 0:
		return fmt.Errorf("before %d is negative (0: no bound)", f.Before)
	}
	return nil
}

// stored is the checked filter f as the store takes it.
func (f Filter) stored() store.JobFilter {
	return store.JobFilter{State: string(f.State), Queue: f.Queue, Kind: f.Kind, Limit: f.Limit,
		After: f.After, Before: f.Before, ErrorContains: f.ErrorContains, UniqueKey: f.UniqueKey,
		Metadata: f.Metadata, Desc: f.Desc}
}

// Get returns the job with the given ID, or [ErrNotFound], with its
// [Job.Output], [Job.Checkpoint] and [Job.Progress].
func (q *Queue) Get(ctx context.Context, id int64) (*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	row, err := store.JobByID(ctx, q.st.reads, q.st.info.JobColumns, id)
	if err != nil {
		if errors.Is(err, store.ErrNoRows) {
			return nil, fmt.Errorf("litequeue: get job %d: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("litequeue: get job %d: %w", id, err)
	}
	j := q.seal.view(row)
	if err := readSaved(ctx, q.st, q.seal, j); err != nil {
		return nil, fmt.Errorf("litequeue: get job %d: %w", id, err)
	}
	if err := readProgress(ctx, q.st, []*Job{j}); err != nil {
		return nil, fmt.Errorf("litequeue: get job %d: %w", id, err)
	}
	return j, nil
}

// List returns the jobs that match the filter, ordered by ID (highest
// first with f.Desc), with their [Job.Progress].
func (q *Queue) List(ctx context.Context, f Filter) ([]*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("litequeue: list jobs: %w", err)
	}
	rows, err := store.ListJobs(ctx, q.st.reads, q.st.info.JobColumns, f.stored())
	if err != nil {
		return nil, fmt.Errorf("litequeue: list jobs: %w", err)
	}
	jobs := make([]*Job, len(rows))
	for i := range rows {
		jobs[i] = q.seal.view(&rows[i])
	}
	if err := readProgress(ctx, q.st, jobs); err != nil {
		return nil, fmt.Errorf("litequeue: list jobs: %w", err)
	}
	return jobs, nil
}

// Count returns how many jobs [Queue.List] would return for the filter:
// those that match it, at most f.Limit of them when it is set. It is the
// number [Queue.ReplayDead] would replay now for a filter of dead jobs.
func (q *Queue) Count(ctx context.Context, f Filter) (int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := f.check(); err != nil {
		return 0, fmt.Errorf("litequeue: count jobs: %w", err)
	}
	n, err := store.CountJobs(ctx, q.st.reads, f.stored())
	if err != nil {
		return 0, fmt.Errorf("litequeue: count jobs: %w", err)
	}
	return n, nil
}
