package litequeue

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// Stats is a snapshot of the queue for monitoring: the signals an operator
// alerts on. Its maps and slices are never nil.
type Stats struct {
	Queues          map[string]QueueStats // per queue name, for the queues that have jobs
	Unhandled       []string              // kinds with due jobs and no handler on this Queue, sorted
	RetriesLastHour []ErrorCount          // failed runs retried in the last hour, per kind and error class, most first
	DeathsLastHour  map[string]int        // jobs that went dead in the last hour, per kind
}

// QueueStats counts one queue's jobs by state. Due and Scheduled split the
// pending jobs at now: Scheduled are those whose RunAt is still to come
// (waiting to retry, or enqueued with a delay). Completed, Discarded and
// Cancelled count the finished jobs still kept (KeepFinished), Dead the
// dead ones (DeadTTL). OldestDue is how long the longest-waiting due job
// has been due: 0 when none is.
type QueueStats struct {
	Due, Scheduled, Running, Dead, Completed, Discarded, Cancelled int
	OldestDue                                                      time.Duration
}

// ErrorCount counts runs of one kind that failed with one error class.
type ErrorCount struct {
	Kind, ErrorClass string
	Count            int
}

const statsJobsSQL = `SELECT queue, state,
	CASE WHEN state = 'pending' AND run_at <= ? THEN 1 ELSE 0 END AS due,
	COUNT(*) AS n, MIN(run_at) AS oldest
	FROM litequeue_jobs GROUP BY queue, state, due`

const statsDueKindsSQL = `SELECT DISTINCT kind FROM litequeue_jobs
	WHERE state = 'pending' AND run_at <= ? ORDER BY kind`

// A retry is a failed run after which the job went back to pending.
const statsRetriesSQL = `SELECT kind, error_class, COUNT(*) AS n FROM litequeue_attempts
	WHERE finished_at > ? AND next_state = 'pending'
	  AND outcome IN ('failed', 'panicked', 'timed_out', 'lease_expired')
	GROUP BY kind, error_class ORDER BY n DESC, kind, error_class`

const statsDeathsSQL = `SELECT kind, COUNT(*) AS n FROM litequeue_attempts
	WHERE finished_at > ? AND next_state = 'dead' GROUP BY kind`

// Stats returns the queue's figures at now on the injected clock, read in
// one snapshot of the file with GROUP BY queries. "The last hour" is the
// runs that finished after now−1h.
func (q *Queue) Stats(ctx context.Context) (Stats, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return Stats{}, err
	}
	defer leave()
	s, err := q.stats(ctx, q.now())
	if err != nil {
		return Stats{}, fmt.Errorf("litequeue: stats: %w", err)
	}
	return s, nil
}

func (q *Queue) stats(ctx context.Context, now time.Time) (Stats, error) {
	// A read-only transaction begins DEFERRED: one snapshot, no write lock.
	tx, err := q.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Stats{}, err
	}
	defer tx.Rollback()
	s := Stats{
		Queues:          map[string]QueueStats{},
		Unhandled:       []string{},
		RetriesLastHour: []ErrorCount{},
		DeathsLastHour:  map[string]int{},
	}
	var groups []struct {
		Queue  string        `db:"queue"`
		State  State         `db:"state"`
		Due    bool          `db:"due"`
		N      int           `db:"n"`
		Oldest sql.NullInt64 `db:"oldest"`
	}
	if err := tx.SelectContext(ctx, &groups, statsJobsSQL, ms(now)); err != nil {
		return Stats{}, err
	}
	for _, g := range groups {
		qs := s.Queues[g.Queue]
		switch {
		case g.Due:
			qs.Due = g.N
			qs.OldestDue = now.Sub(nullTime(g.Oldest))
		case g.State == Pending:
			qs.Scheduled = g.N
		case g.State == Running:
			qs.Running = g.N
		case g.State == Dead:
			qs.Dead = g.N
		case g.State == Completed:
			qs.Completed = g.N
		case g.State == Discarded:
			qs.Discarded = g.N
		case g.State == Cancelled:
			qs.Cancelled = g.N
		}
		s.Queues[g.Queue] = qs
	}
	var kinds []string
	if err := tx.SelectContext(ctx, &kinds, statsDueKindsSQL, ms(now)); err != nil {
		return Stats{}, err
	}
	handled := q.kinds()
	for _, k := range kinds {
		if _, ok := slices.BinarySearch(handled, k); !ok {
			s.Unhandled = append(s.Unhandled, k)
		}
	}
	hourAgo := ms(now.Add(-time.Hour))
	var retries []struct {
		Kind  string `db:"kind"`
		Class string `db:"error_class"`
		N     int    `db:"n"`
	}
	if err := tx.SelectContext(ctx, &retries, statsRetriesSQL, hourAgo); err != nil {
		return Stats{}, err
	}
	for _, r := range retries {
		s.RetriesLastHour = append(s.RetriesLastHour, ErrorCount{Kind: r.Kind, ErrorClass: r.Class, Count: r.N})
	}
	var deaths []struct {
		Kind string `db:"kind"`
		N    int    `db:"n"`
	}
	if err := tx.SelectContext(ctx, &deaths, statsDeathsSQL, hourAgo); err != nil {
		return Stats{}, err
	}
	for _, d := range deaths {
		s.DeathsLastHour[d.Kind] = d.N
	}
	return s, nil
}
