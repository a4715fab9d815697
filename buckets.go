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

// failuresSQL counts what statsRetriesSQL and statsDeathsSQL count, per
// minute as well: a retry is a failed run after which the job went back
// to pending, a death any run after which it went dead.
const failuresSQL = `SELECT (finished_at / 60000) * 60000 AS minute, kind, error_class,
	SUM(CASE WHEN next_state = 'pending' THEN 1 ELSE 0 END) AS retries,
	SUM(CASE WHEN next_state = 'dead' THEN 1 ELSE 0 END) AS deaths
	FROM litequeue_attempts
	WHERE finished_at > ? AND (next_state = 'dead' OR (next_state = 'pending' AND ` + store.FailedSQL + `))
	GROUP BY minute, kind, error_class ORDER BY minute, kind, error_class`

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
	var rows []struct {
		Minute  int64  `db:"minute"`
		Kind    string `db:"kind"`
		Class   string `db:"error_class"`
		Retries int    `db:"retries"`
		Deaths  int    `db:"deaths"`
	}
	if err := q.st.reads.SelectContext(ctx, &rows, failuresSQL, store.MS(q.now().Add(-time.Hour))); err != nil {
		return nil, fmt.Errorf("litequeue: failures of the last hour: %w", err)
	}
	out := make([]FailureCount, len(rows))
	for i, r := range rows {
		out[i] = FailureCount{Minute: store.FromMS(r.Minute), Kind: r.Kind, ErrorClass: r.Class, Retries: r.Retries, Deaths: r.Deaths}
	}
	return out, nil
}
