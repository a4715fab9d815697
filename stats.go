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
	Unhandled       []string              // kinds with due jobs and no handler on this [Queue], sorted
	RetriesLastHour []ErrorCount          // failed runs retried in the last hour, per kind and error class, most first
	DeathsLastHour  map[string]int        // jobs that went dead in the last hour, per kind
	// DeathsByClassLastHour splits [Stats.DeathsLastHour] by the error class of
	// each job's last run, most first: what killed them.
	DeathsByClassLastHour []ErrorCount
	// Paused lists the paused queues, then the paused kinds, each sorted
	// by name (see [Queue.PauseQueue]).
	Paused []Pause
	// Breakers holds the circuit breakers that are not closed, per kind
	// (see [Breaker]): open, or half-open with their probe running.
	Breakers map[string]BreakerStats
}

// QueueStats counts one queue's jobs by state. [QueueStats.Due] and
// [QueueStats.Scheduled] split the pending jobs at now: Scheduled are those
// whose [Job.RunAt] is still to come (waiting to retry, or enqueued with a
// delay). [QueueStats.Completed], [QueueStats.Discarded],
// [QueueStats.Cancelled] and [QueueStats.Expired] count the finished jobs
// still kept ([Options.KeepFinished], or the [Retention] rule of their
// queue or kind), [QueueStats.Dead] the dead ones ([Options.DeadTTL]).
// [QueueStats.OldestDue] is how long the longest-waiting due job has been
// due: 0 when none is.
type QueueStats struct {
	Due, Scheduled, Running, Dead, Completed, Discarded, Cancelled int
	Expired                                                        int // not started by their expiry: see [ExpireAfter]
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
	WHERE finished_at > ? AND next_state = 'pending' AND ` + failedSQL + `
	GROUP BY kind, error_class ORDER BY n DESC, kind, error_class`

// A death is the run after which the job went dead.
const statsDeathsSQL = `SELECT kind, error_class, COUNT(*) AS n FROM litequeue_attempts
	WHERE finished_at > ? AND next_state = 'dead'
	GROUP BY kind, error_class ORDER BY n DESC, kind, error_class`

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

func (q *Queue) stats(ctx context.Context, now time.Time) (s Stats, err error) {
	// A read-only transaction begins DEFERRED: one snapshot, no write lock.
	err = q.db.read(ctx, &sql.TxOptions{ReadOnly: true}, func(tx execer) (err error) {
		s, err = q.statsTx(ctx, tx, now)
		return err
	})
	return s, err
}

// statsTx is stats in tx.
func (q *Queue) statsTx(ctx context.Context, tx execer, now time.Time) (s Stats, err error) {
	if s.Queues, err = queueStats(ctx, tx, now); err != nil {
		return Stats{}, err
	}
	if s.Unhandled, err = q.unhandled(ctx, tx, now); err != nil {
		return Stats{}, err
	}
	hourAgo := ms(now.Add(-time.Hour))
	if s.RetriesLastHour, err = errorCounts(ctx, tx, statsRetriesSQL, hourAgo); err != nil {
		return Stats{}, err
	}
	if s.DeathsByClassLastHour, err = errorCounts(ctx, tx, statsDeathsSQL, hourAgo); err != nil {
		return Stats{}, err
	}
	s.DeathsLastHour = map[string]int{}
	for _, d := range s.DeathsByClassLastHour {
		s.DeathsLastHour[d.Kind] += d.Count
	}
	if s.Paused, err = q.pauses(ctx, tx); err != nil {
		return Stats{}, err
	}
	if s.Breakers, err = q.breakerStats(ctx, tx); err != nil {
		return Stats{}, err
	}
	return s, nil
}

// stateGroup is a row of statsJobsSQL: the jobs of one queue in one state,
// the pending ones split into due and not.
type stateGroup struct {
	Queue  string        `db:"queue"`
	State  State         `db:"state"`
	Due    bool          `db:"due"`
	N      int           `db:"n"`
	Oldest sql.NullInt64 `db:"oldest"`
}

// queueStats counts the jobs of each queue by state at now.
func queueStats(ctx context.Context, tx execer, now time.Time) (map[string]QueueStats, error) {
	var groups []stateGroup
	if err := tx.SelectContext(ctx, &groups, statsJobsSQL, ms(now)); err != nil {
		return nil, err
	}
	queues := map[string]QueueStats{}
	for _, g := range groups {
		qs := queues[g.Queue]
		qs.add(g, now)
		queues[g.Queue] = qs
	}
	return queues, nil
}

// add counts the group g in its state's field.
func (qs *QueueStats) add(g stateGroup, now time.Time) {
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
	case g.State == Expired:
		qs.Expired = g.N
	}
}

// unhandled returns the kinds that have due jobs at now and no handler on
// q, sorted.
func (q *Queue) unhandled(ctx context.Context, tx execer, now time.Time) ([]string, error) {
	var kinds []string
	if err := tx.SelectContext(ctx, &kinds, statsDueKindsSQL, ms(now)); err != nil {
		return nil, err
	}
	handled := q.kinds()
	unhandled := []string{}
	for _, k := range kinds {
		if _, ok := slices.BinarySearch(handled, k); !ok {
			unhandled = append(unhandled, k)
		}
	}
	return unhandled, nil
}

// errorCounts runs query, a count of runs per kind and error class since
// the Unix millisecond since, and returns its rows; never nil.
func errorCounts(ctx context.Context, tx execer, query string, since int64) ([]ErrorCount, error) {
	var rows []struct {
		Kind  string `db:"kind"`
		Class string `db:"error_class"`
		N     int    `db:"n"`
	}
	if err := tx.SelectContext(ctx, &rows, query, since); err != nil {
		return nil, err
	}
	counts := make([]ErrorCount, len(rows))
	for i, r := range rows {
		counts[i] = ErrorCount{Kind: r.Kind, ErrorClass: r.Class, Count: r.N}
	}
	return counts, nil
}
