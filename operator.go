package litequeue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// What an operator's window (the dashboard, the command) reads of this
// process beside the database: the run a running job is in, and the
// breakers. (The kinds it handles and their limits: stats.go.)

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
// time set; never nil. Each comes with the failures it counts (see
// [BreakerStats.Failures]).
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
	if err := q.gate.countFailures(ctx, q.st.reads, out, q.now()); err != nil {
		return nil, fmt.Errorf("litequeue: breakers: %w", err)
	}
	return out, nil
}
