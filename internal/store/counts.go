package store

import (
	"context"
	"database/sql"
	"fmt"
)

// The kept counts of the jobs: litequeue_counts holds, per queue, kind and
// state, how many jobs there are, kept in the same transaction as every
// insert, delete and change of state, queue or kind of a job: on a file by
// this package's operations that write jobs (Deltas), on a server by
// triggers on litequeue_jobs (its schema.sql), whoever writes. The figures of Stats read them
// instead of every job. On a server a count is split in shards, one per
// session that wrote (pg_backend_pid), so that two transactions never wait
// on one row of it; a read sums the shards. The file has one shard, 0.

// keptByStateSQL sums the kept counts of every state but pending per
// queue: the number of rows read is that of the groups (and, on a
// server, of their shards), whatever the number of jobs.
const keptByStateSQL = `SELECT queue, state, CAST(SUM(n) AS BIGINT) AS n FROM litequeue_counts
	WHERE state <> 'pending' GROUP BY queue, state HAVING SUM(n) > 0`

// pendingPriorities is the recursive part of the reads of the pending
// jobs below and of NextPending's (due.go): pr holds, for each kind of k, the priorities its pending
// jobs have, one probe of the claim index (kind, priority DESC, run_at,
// id) each.
const pendingPriorities = `pr(kind, v) AS MATERIALIZED (
		SELECT k.kind, (SELECT priority FROM litequeue_jobs WHERE state = 'pending' AND kind = k.kind
			ORDER BY priority DESC LIMIT 1) FROM k
		UNION ALL
		SELECT pr.kind, (SELECT priority FROM litequeue_jobs WHERE state = 'pending' AND kind = pr.kind AND priority < pr.v
			ORDER BY priority DESC LIMIT 1) FROM pr WHERE pr.v IS NOT NULL)`

// keptPendingSQL reads, per queue and kind that has pending jobs (c),
// their kept count, how many of them are not due at now, and, where some
// are, the earliest RunAt of those that are, through the claim index, a
// range per kind and priority (pr). The scheduled jobs are counted one by
// one (s): of a kind in one queue, the common case, in the index alone; of
// a kind in several, in one pass that reads each job's queue. They are few
// where most pending jobs are due. The earliest is one probe per queue,
// kind and priority where the kind is in one queue; where it is in
// several, the probe steps over the kind's earlier jobs of the other
// queues.
const keptPendingSQL = `WITH RECURSIVE c AS MATERIALIZED (SELECT queue, kind, CAST(SUM(n) AS BIGINT) AS n
		FROM litequeue_counts WHERE state = 'pending' GROUP BY queue, kind HAVING SUM(n) > 0),
	k AS MATERIALIZED (SELECT kind, MIN(queue) AS queue, COUNT(*) AS queues FROM c GROUP BY kind),
	` + pendingPriorities + `,
	s AS MATERIALIZED (SELECT k.queue, k.kind, (SELECT CAST(COALESCE(SUM((SELECT COUNT(*) FROM litequeue_jobs j
			WHERE j.state = 'pending' AND j.kind = pr.kind AND j.priority = pr.v AND j.run_at > ?)), 0) AS BIGINT)
			FROM pr WHERE pr.kind = k.kind AND pr.v IS NOT NULL) AS n
		FROM k WHERE k.queues = 1
		UNION ALL
		SELECT j.queue, j.kind, COUNT(*) AS n FROM k JOIN pr ON pr.kind = k.kind CROSS JOIN litequeue_jobs j
		WHERE k.queues > 1 AND pr.v IS NOT NULL
		  AND j.state = 'pending' AND j.kind = pr.kind AND j.priority = pr.v AND j.run_at > ?
		GROUP BY j.queue, j.kind),
	p AS MATERIALIZED (SELECT c.queue, c.kind, c.n, COALESCE(s.n, 0) AS scheduled
		FROM c LEFT JOIN s ON s.queue = c.queue AND s.kind = c.kind)
	SELECT p.queue, p.kind, p.n, p.scheduled,
	CASE WHEN p.n > p.scheduled THEN (SELECT MIN((SELECT j.run_at FROM litequeue_jobs j
		WHERE j.state = 'pending' AND j.kind = pr.kind AND j.priority = pr.v AND j.queue = p.queue AND j.run_at <= ?
		ORDER BY j.run_at LIMIT 1)) FROM pr WHERE pr.kind = p.kind AND pr.v IS NOT NULL) END AS oldest
	FROM p`

// keptDueKindsSQL: one probe of the claim index per kind that has
// pending jobs and priority they have.
const keptDueKindsSQL = `WITH RECURSIVE k AS MATERIALIZED (SELECT kind FROM litequeue_counts WHERE state = 'pending'
		GROUP BY kind HAVING SUM(n) > 0),
	` + pendingPriorities + `
	SELECT DISTINCT pr.kind FROM pr WHERE pr.v IS NOT NULL
	  AND EXISTS (SELECT 1 FROM litequeue_jobs j WHERE j.state = 'pending' AND j.kind = pr.kind AND j.priority = pr.v AND j.run_at <= ?)
	ORDER BY pr.kind`

// pendingPair is a row of keptPendingSQL.
type pendingPair struct {
	Queue     string        `db:"queue"`
	Kind      string        `db:"kind"`
	N         int           `db:"n"`
	Oldest    sql.NullInt64 `db:"oldest"`
	Scheduled int           `db:"scheduled"`
}

// KeptCountByState returns on db what CountByState does, without a scan
// of the jobs: the counts from litequeue_counts, the split of the pending
// jobs at now from keptPendingSQL's probes.
func KeptCountByState(ctx context.Context, db Execer, now int64) ([]StateCount, error) {
	out, err := selectAll[StateCount](ctx, db, keptByStateSQL)
	if err != nil {
		return nil, err
	}
	pairs, err := selectAll[pendingPair](ctx, db, keptPendingSQL, now, now, now)
	if err != nil {
		return nil, err
	}
	due := map[string]*StateCount{}
	scheduled := map[string]*StateCount{}
	for _, p := range pairs {
		if p.Scheduled > 0 {
			group(scheduled, p.Queue, false).N += p.Scheduled
		}
		if p.N > p.Scheduled {
			g := group(due, p.Queue, true)
			g.N += p.N - p.Scheduled
			if !g.Oldest.Valid || p.Oldest.Int64 < g.Oldest.Int64 {
				g.Oldest = p.Oldest
			}
		}
	}
	for _, groups := range []map[string]*StateCount{due, scheduled} {
		for _, g := range groups {
			out = append(out, *g)
		}
	}
	return out, nil
}

// group returns the pending group of queue in groups, made if new.
func group(groups map[string]*StateCount, queue string, due bool) *StateCount {
	g := groups[queue]
	if g == nil {
		g = &StateCount{Queue: queue, State: "pending", Due: due}
		groups[queue] = g
	}
	return g
}

// KeptDueKinds returns on db what DueKinds does, from the kinds that
// litequeue_counts has pending jobs of, one probe each.
func KeptDueKinds(ctx context.Context, db Execer, now int64) ([]string, error) {
	return selectAll[string](ctx, db, keptDueKindsSQL, now)
}

// JobCount is how many jobs of one queue and kind are in one state.
type JobCount struct {
	Queue string `db:"queue"`
	Kind  string `db:"kind"`
	State string `db:"state"`
	N     int    `db:"n"`
}

// CountDiff is a group whose kept count differs from a recount.
type CountDiff struct {
	JobCount     // the recount
	Kept     int // the kept count
}

const (
	keptCountsSQL = `SELECT queue, kind, state, CAST(SUM(n) AS BIGINT) AS n FROM litequeue_counts
		GROUP BY queue, kind, state HAVING SUM(n) <> 0`
	recountSQL = `SELECT queue, kind, state, COUNT(*) AS n FROM litequeue_jobs GROUP BY queue, kind, state`
	// lockJobsSQL makes the writers of litequeue_jobs on a server wait
	// until the transaction ends, and waits for those at work: what a
	// recount reads is then what the counts must hold at its commit.
	lockJobsSQL      = `LOCK TABLE litequeue_jobs IN SHARE ROW EXCLUSIVE MODE`
	clearCountsSQL   = `DELETE FROM litequeue_counts`
	rewriteCountsSQL = `INSERT INTO litequeue_counts (queue, kind, state, shard, n)
		SELECT queue, kind, state, 0, COUNT(*) FROM litequeue_jobs GROUP BY queue, kind, state`
)

// CheckCounts recounts the jobs on db with one scan and returns the
// groups whose kept count differs, in no order; db should be one
// snapshot (a read transaction).
func CheckCounts(ctx context.Context, db Execer) ([]CountDiff, error) {
	kept, err := selectAll[JobCount](ctx, db, keptCountsSQL)
	if err != nil {
		return nil, fmt.Errorf("read the kept counts: %w", err)
	}
	counted, err := selectAll[JobCount](ctx, db, recountSQL)
	if err != nil {
		return nil, fmt.Errorf("recount the jobs: %w", err)
	}
	return diffCounts(kept, counted), nil
}

// diffCounts returns the groups of counted whose count in kept differs,
// and those of kept that counted has none of (with N 0).
func diffCounts(kept, counted []JobCount) []CountDiff {
	type key struct{ queue, kind, state string }
	held := make(map[key]int, len(kept))
	for _, c := range kept {
		held[key{c.Queue, c.Kind, c.State}] = c.N
	}
	var diffs []CountDiff
	for _, c := range counted {
		k := key{c.Queue, c.Kind, c.State}
		if held[k] != c.N {
			diffs = append(diffs, CountDiff{JobCount: c, Kept: held[k]})
		}
		delete(held, k)
	}
	for k, n := range held {
		diffs = append(diffs, CountDiff{JobCount: JobCount{Queue: k.queue, Kind: k.kind, State: k.state}, Kept: n})
	}
	return diffs
}

// RepairCounts recounts the jobs in tx, a write transaction, and where
// any kept count differs rewrites them all from the recount, in one shard
// (0); it returns the groups that differed. Where the engine's writers do
// not take turns (not serial), it first locks litequeue_jobs against the
// other writers (lockJobsSQL), so that no change goes uncounted between
// the recount and the rewrite; it writes the changes that its batch's
// operations before it gathered first (see Conn.gather).
func RepairCounts(ctx context.Context, tx Execer, serial bool) ([]CountDiff, error) {
	if !serial {
		if _, err := tx.ExecContext(ctx, lockJobsSQL); err != nil {
			return nil, fmt.Errorf("lock the jobs: %w", err)
		}
	}
	if err := writeGathered(tx); err != nil {
		return nil, err
	}
	diffs, err := CheckCounts(ctx, tx)
	if err != nil || len(diffs) == 0 {
		return diffs, err
	}
	if err := RewriteCounts(ctx, tx); err != nil {
		return nil, err
	}
	return diffs, nil
}

// RewriteCounts replaces the kept counts in tx with a recount of the
// jobs, in one shard (0): the fill of a migration, which holds the
// writers off as a repair does.
func RewriteCounts(ctx context.Context, tx Execer) error {
	if _, err := tx.ExecContext(ctx, clearCountsSQL); err != nil {
		return fmt.Errorf("clear the counts: %w", err)
	}
	if _, err := tx.ExecContext(ctx, rewriteCountsSQL); err != nil {
		return fmt.Errorf("rewrite the counts: %w", err)
	}
	return nil
}

// foldCountsSQL moves the kept counts of the shards of the sessions that
// are gone (their pg_backend_pid no longer in pg_stat_activity) into
// shard 0, so that the rows a read sums stay those of the sessions at
// work, not of every session that ever wrote. It skips the rows another
// fold holds, and waits for no writer: a session at work is not folded,
// and one that starts with the pid of one gone waits for the fold's
// commit, then makes its row anew.
const foldCountsSQL = `WITH gone AS (DELETE FROM litequeue_counts WHERE ctid IN (SELECT ctid FROM litequeue_counts
		WHERE shard <> 0 AND shard NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)
		FOR UPDATE SKIP LOCKED)
		RETURNING queue, kind, state, n)
	INSERT INTO litequeue_counts AS c (queue, kind, state, shard, n)
	SELECT queue, kind, state, 0, SUM(n) FROM gone GROUP BY queue, kind, state ORDER BY queue, kind, state
	ON CONFLICT (queue, kind, state, shard) DO UPDATE SET n = c.n + excluded.n`

// FoldCounts folds, in a transaction of write, the kept counts of the
// sessions gone into one shard (foldCountsSQL), where the engine's writers
// run side by side and so keep a shard each; the janitor calls it at each
// sweep. Where the writers take turns (serial) there is one shard, and it
// does nothing.
func FoldCounts(ctx context.Context, eng Engine, write func(context.Context, func(Execer) error) error) error {
	if eng.Serial() {
		return nil
	}
	return write(ctx, func(tx Execer) error {
		_, err := tx.ExecContext(ctx, foldCountsSQL)
		return err
	})
}
