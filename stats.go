package litequeue

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/litequeue/litequeue/internal/store"
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
	Waiting                                                        int // for their dependencies: see [DependsOn]
	OldestDue                                                      time.Duration
}

// ErrorCount counts runs of one kind that failed with one error class.
type ErrorCount struct {
	Kind, ErrorClass string
	Count            int
}

// Stats returns the queue's figures at now on the injected clock, read in
// one snapshot of the database. "The last hour" is the runs that finished
// after now−1h. The counts by state are those the database keeps beside
// the jobs, not a scan of them: the work grows with the number of queues,
// kinds and states, not of jobs; the split of the pending jobs into due
// and scheduled, with the oldest due, reads the scheduled jobs and one
// probe per queue and kind with due jobs (see Monitoring in the package
// doc).
// A file of version 5 or older opened with [OpenReadOnly] keeps no counts:
// there Stats reads every job.
func (q *Queue) Stats(ctx context.Context) (Stats, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return Stats{}, err
	}
	defer leave()
	var s Stats
	now := q.now()
	err = q.st.reads.Snapshot(ctx, func(tx store.Execer) (err error) {
		s, err = readStats(ctx, tx, now, !q.st.info.Uncounted, q.reg, q.gate)
		return err
	})
	if err != nil {
		return Stats{}, fmt.Errorf("litequeue: stats: %w", err)
	}
	return s, nil
}

// readStats reads the figures at now in tx, one snapshot of the database,
// from its kept counts if kept, else by a scan of the jobs: the kinds
// without a handler are those that reg has none for, the pauses and
// breakers those of g.
func readStats(ctx context.Context, tx store.Execer, now time.Time, kept bool, reg *registry, g *gate) (s Stats, err error) {
	countByState, dueKinds := store.CountByState, store.DueKinds
	if kept {
		countByState, dueKinds = store.KeptCountByState, store.KeptDueKinds
	}
	if s.Queues, err = queueStats(ctx, tx, now, countByState); err != nil {
		return Stats{}, err
	}
	due, err := dueKinds(ctx, tx, store.MS(now))
	if err != nil {
		return Stats{}, err
	}
	s.Unhandled = unhandled(due, reg.kinds())
	hourAgo := store.MS(now.Add(-time.Hour))
	retries, err := store.RetriesSince(ctx, tx, hourAgo)
	if err != nil {
		return Stats{}, err
	}
	s.RetriesLastHour = errorCounts(retries)
	deaths, err := store.DeathsSince(ctx, tx, hourAgo)
	if err != nil {
		return Stats{}, err
	}
	s.DeathsByClassLastHour = errorCounts(deaths)
	s.DeathsLastHour = map[string]int{}
	for _, d := range s.DeathsByClassLastHour {
		s.DeathsLastHour[d.Kind] += d.Count
	}
	paused, err := g.pausedRows(ctx, tx)
	if err != nil {
		return Stats{}, err
	}
	s.Paused = pausesOf(paused)
	if s.Breakers, err = g.breakerStats(ctx, tx); err != nil {
		return Stats{}, err
	}
	return s, nil
}

// queueStats counts the jobs of each queue by state at now with count.
func queueStats(ctx context.Context, tx store.Execer, now time.Time,
	count func(context.Context, store.Execer, int64) ([]store.StateCount, error)) (map[string]QueueStats, error) {
	groups, err := count(ctx, tx, store.MS(now))
	if err != nil {
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
func (qs *QueueStats) add(g store.StateCount, now time.Time) {
	switch state := State(g.State); {
	case g.Due:
		qs.Due = g.N
		qs.OldestDue = now.Sub(store.NullTime(g.Oldest))
	case state == Pending:
		qs.Scheduled = g.N
	case state == Running:
		qs.Running = g.N
	case state == Dead:
		qs.Dead = g.N
	case state == Completed:
		qs.Completed = g.N
	case state == Discarded:
		qs.Discarded = g.N
	case state == Cancelled:
		qs.Cancelled = g.N
	case state == Expired:
		qs.Expired = g.N
	case state == Waiting:
		qs.Waiting = g.N
	}
}

// unhandled returns the kinds of due, sorted, that are not in handled,
// sorted; never nil.
func unhandled(due, handled []string) []string {
	kinds := []string{}
	for _, k := range due {
		if _, ok := slices.BinarySearch(handled, k); !ok {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// errorCounts returns the store's counts of runs per kind and error
// class as ErrorCounts; never nil.
func errorCounts(rows []store.ClassCount) []ErrorCount {
	counts := make([]ErrorCount, len(rows))
	for i, r := range rows {
		counts[i] = ErrorCount{Kind: r.Kind, ErrorClass: r.Class, Count: r.N}
	}
	return counts
}

// Handled returns the kinds that have a handler on this Queue
// ([Queue.Handle]), sorted; never nil. A Queue that only enqueues, or
// that the litequeue command or its dashboard opened, has none: its
// [Stats].Unhandled lists every kind with due jobs.
func (q *Queue) Handled() []string {
	if kinds := q.reg.kinds(); kinds != nil {
		return kinds
	}
	return []string{}
}

// Limits reads the use of the limits of each kind whose handler on this
// Queue has one, sorted by kind; never nil. It reads one snapshot of the
// database at now on the injected clock. The limits are this Queue's, as
// [Queue.Handle] set them: a Queue without handlers, such as the
// litequeue command's, has none to read.
func (q *Queue) Limits(ctx context.Context) ([]LimitStats, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	var out []LimitStats
	now := q.now()
	err = q.st.reads.Snapshot(ctx, func(tx store.Execer) (err error) {
		out, err = q.gate.limitStats(ctx, tx, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("litequeue: limits: %w", err)
	}
	return out, nil
}
