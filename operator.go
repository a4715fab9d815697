package litequeue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// What an operator's window (the dashboard, the command) reads of this
// process beside the database: the kinds it handles, their limits against
// what the database counts, and the run a running job is in.

// HandledKinds returns the kinds this Queue has a handler for
// ([Queue.Handle], [Options.Kinds]), sorted; nil when it has none, as a
// Queue opened only to inspect the file (`litequeue serve`) has.
func (q *Queue) HandledKinds() []string {
	kinds := q.reg.kinds()
	if len(kinds) == 0 {
		return nil
	}
	return kinds
}

// LimitStats is one kind's limits on its runs, as this Queue's handler
// sets them ([MaxRunning], [RateLimit]), against what the database counts
// at now, across every process on it.
type LimitStats struct {
	Kind       string
	MaxRunning int           // MaxRunning's n; 0: none
	Running    int           // the kind's running jobs
	Rate       int           // RateLimit's n; 0: none
	Per        time.Duration // RateLimit's window
	Started    int           // the kind's starts in the window that ends at now; 0 without a Rate
}

// Limits returns the limits of the kinds this Queue handles with
// [MaxRunning] or [RateLimit], sorted by kind, each with its running jobs
// and its starts in the window at now on the injected clock, read in one
// snapshot; never nil. The limits are those of this Queue's handlers: a
// Queue without handlers knows of none.
func (q *Queue) Limits(ctx context.Context) ([]LimitStats, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	out := []LimitStats{}
	var kinds []string
	for _, kind := range q.reg.kinds() {
		if l := q.reg.get(kind).limits; l.limited() {
			out = append(out, LimitStats{Kind: kind, MaxRunning: l.running, Rate: l.rate, Per: l.per})
			kinds = append(kinds, kind)
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	now := store.MS(q.now())
	err = q.st.reads.Snapshot(ctx, func(tx store.Execer) error {
		running, err := store.Running(ctx, tx, kinds)
		if err != nil {
			return err
		}
		for i := range out {
			out[i].Running = running[out[i].Kind]
			if out[i].Rate == 0 || !q.st.info.Flow {
				continue
			}
			if out[i].Started, _, err = store.Starts(ctx, tx, out[i].Kind, now-out[i].Per.Milliseconds(), now, 1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("litequeue: limits: %w", err)
	}
	return out, nil
}

// RunInfo is the run a running job is in, as [Queue.CurrentRun] reads it.
type RunInfo struct {
	Worker     string        // the worker that claimed it, as its history will name it
	StartedAt  time.Time     // when the run was claimed
	LeaseUntil time.Time     // when its lease ends unless the worker extends it; then it is rescued
	Timeout    time.Duration // its handler's [WithTimeout] on this Queue; 0: none, or no handler here
}

// CurrentRun returns the run of the job with the given ID if it is
// running; false if it is not (pending, finished, dead); [ErrNotFound] if
// no job has the ID.
func (q *Queue) CurrentRun(ctx context.Context, id int64) (RunInfo, bool, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return RunInfo{}, false, err
	}
	defer leave()
	row, err := store.JobByID(ctx, q.st.reads, q.st.info.JobColumns, id)
	if errors.Is(err, store.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return RunInfo{}, false, fmt.Errorf("litequeue: current run of job %d: %w", id, err)
	}
	if State(row.State) != Running {
		return RunInfo{}, false, nil
	}
	info := RunInfo{Worker: row.Worker, StartedAt: store.FromMS(row.StartedAt), LeaseUntil: store.FromMS(row.LeaseUntil)}
	if h := q.reg.get(row.Kind); h != nil {
		info.Timeout = h.timeout
	}
	return info, true, nil
}

// Breakers returns the circuit breakers by kind: every one the database
// holds open or half-open (as [Stats].Breakers), and those of this Queue's
// handlers ([WithBreaker]) that are closed, with State "closed" and no
// other field set; never nil.
func (q *Queue) Breakers(ctx context.Context) (map[string]BreakerStats, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	out, err := q.gate.breakerStats(ctx, q.st.reads)
	if err != nil {
		return nil, fmt.Errorf("litequeue: breakers: %w", err)
	}
	for _, kind := range q.reg.kinds() {
		if _, ok := out[kind]; !ok && q.reg.get(kind).breaker != nil {
			out[kind] = BreakerStats{State: breakerClosed}
		}
	}
	return out, nil
}
