package litequeue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// History returns the job's history, oldest first, in the order its runs
// started, across replays: one row per run and one per replay. The order is
// that of the runs, not of their [Attempt.StartedAt] times, which a clock
// set back between two runs makes go backwards. It returns [ErrNotFound]
// for an ID that names no job.
func (q *Queue) History(ctx context.Context, id int64) ([]Attempt, error) {
	if _, err := q.Get(ctx, id); errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("litequeue: history of job %d: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	rows, err := store.History(ctx, q.st.reads, id)
	if err != nil {
		return nil, fmt.Errorf("litequeue: history of job %d: %w", id, err)
	}
	attempts := make([]Attempt, len(rows))
	for i, r := range rows {
		attempts[i] = Attempt{
			Attempt:    r.Attempt,
			StartedAt:  store.FromMS(r.StartedAt),
			FinishedAt: store.FromMS(r.FinishedAt),
			Outcome:    Outcome(r.Outcome),
			Error:      r.Error,
			ErrorClass: r.ErrorClass,
			Delay:      time.Duration(r.Delay) * time.Millisecond,
			Worker:     r.Worker,
		}
	}
	return attempts, nil
}
