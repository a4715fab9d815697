package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// FailureCount counts, for one minute, one kind and one error class, the
// failed runs after which the job was retried and those after which it
// went dead: a point of the chart of failures over time.
type FailureCount struct {
	Minute           time.Time // the start of the minute, on the injected clock
	Kind, ErrorClass string
	Retries, Deaths  int
}

// FailuresLastHour returns the retries and deaths of the last hour — the
// runs that finished after now−1h on the injected clock, those that [Stats]
// counts in [Stats.RetriesLastHour] and [Stats.DeathsLastHour] — per minute
// (of Unix time), kind and error class, oldest minute first and then by
// kind and class. Minutes without failures are left out; the first minute
// may be partly outside the hour. The result is never nil.
func (q *Queue) FailuresLastHour(ctx context.Context) ([]FailureCount, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	rows, err := store.FailuresSince(ctx, q.st.reads, store.MS(q.now().Add(-time.Hour)))
	if err != nil {
		return nil, fmt.Errorf("litequeue: failures of the last hour: %w", err)
	}
	out := make([]FailureCount, len(rows))
	for i, r := range rows {
		out[i] = FailureCount{Minute: store.FromMS(r.Minute), Kind: r.Kind, ErrorClass: r.Class, Retries: r.Retries, Deaths: r.Deaths}
	}
	return out, nil
}
