package litequeue

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
)

// Retention: finished jobs are kept for a while, then purged with their
// history by the janitor, which RunDue calls after each call's runs and
// Work at most once a minute on the injected clock. A job finished at T is
// kept while the clock reads before T+TTL and purged from T+TTL on (the TTL
// is DeadTTL for dead jobs, KeepFinished for completed, discarded,
// cancelled and expired ones: the Options' values, or those of the
// Retention rule of the job's queue or kind, see retention.go; KeepForever
// purges nothing); an idempotency key is purged once it has expired. The
// janitor deletes in transactions of at most purgeBatch rows, so that it
// never holds the write lock for long, and finds what to delete with reads
// that take no lock, so that with nothing to delete it writes nothing.

// purgeBatch bounds the rows — jobs and their history rows, or keys — one
// retention transaction deletes. A job is never split from its history, so
// a job with more history rows than this goes alone in a larger one.
const purgeBatch = 1000

// sweepEvery is how often Work runs the janitor, on the injected clock.
const sweepEvery = time.Minute

// finishedStates are the terminal states kept for KeepFinished.
var finishedStates = []State{Completed, Discarded, Cancelled, Expired}

// sweep expires the pending jobs whose expiry has come (see expire.go),
// of every kind, and purges what retention no longer keeps: dead jobs
// after DeadTTL, other finished jobs after KeepFinished, and expired
// idempotency keys. Timed by the Queue's clock, it does nothing while
// that is too far from a server's (see clockCheck).
func (q *Queue) sweep(ctx context.Context) error {
	if err := q.skew.check(ctx, q.db); err != nil {
		return err
	}
	expired, err := q.expireSweep(ctx)
	if err != nil {
		return err
	}
	if expired > 0 {
		q.opts.Logger.Info("litequeue: expired jobs not started by their expiry", "jobs", expired)
	}
	var dead, finished int
	for _, c := range keepClasses(q.opts.Retention, q.opts.KeepFinished, q.opts.DeadTTL) {
		n, err := q.purgeClass(ctx, []State{Dead}, c.deadTTL, c)
		if err != nil {
			return err
		}
		dead += n
		if n, err = q.purgeClass(ctx, finishedStates, c.keepFinished, c); err != nil {
			return err
		}
		finished += n
	}
	keys, err := q.purgeKeys(ctx)
	if err != nil {
		return err
	}
	if dead+finished+keys > 0 {
		q.opts.Logger.Info("litequeue: retention purged", "dead", dead, "finished", finished, "keys", keys)
	}
	return q.eng.compact(ctx, q.write)
}

// expiredJobsSQL is followed by the class's condition, if any, and
// purgeLimitSQL.
const expiredJobsSQL = `SELECT id,
	(SELECT COUNT(*) FROM litequeue_attempts a WHERE a.job_id = j.id) AS history
	FROM litequeue_jobs j WHERE state IN (?) AND finished_at <= ?`

const purgeLimitSQL = ` LIMIT ?`

const deleteJobsSQL = `DELETE FROM litequeue_jobs
	WHERE id IN (?) AND state IN (?) AND finished_at <= ? RETURNING id`

const deleteHistorySQL = `DELETE FROM litequeue_attempts WHERE job_id IN (?)`

// purgeJobs deletes, with their history, the jobs in the given terminal
// states that finished at least age ago, and returns how many it deleted.
func (q *Queue) purgeJobs(ctx context.Context, states []State, age time.Duration) (int, error) {
	return q.purgeClass(ctx, states, age, keepClass{})
}

// purgeClass is purgeJobs for the jobs of class c; it deletes none for an
// age of KeepForever.
func (q *Queue) purgeClass(ctx context.Context, states []State, age time.Duration, c keepClass) (int, error) {
	if age == KeepForever {
		return 0, nil
	}
	query := expiredJobsSQL
	if c.cond != "" {
		query += " AND " + c.cond
	}
	query += purgeLimitSQL
	total := 0
	for {
		cutoff := ms(q.now().Add(-age))
		var found []purgeRow
		args := append(append([]any{states, cutoff}, c.args...), purgeBatch)
		if err := selectIn(ctx, q.db, &found, query, args...); err != nil {
			return total, err
		}
		ids := nextBatch(found)
		if len(ids) == 0 {
			return total, nil
		}
		n, err := q.deleteBatch(ctx, ids, states, cutoff)
		total += n
		if err != nil {
			return total, err
		}
		if len(ids) == len(found) && len(found) < purgeBatch {
			return total, nil
		}
	}
}

// purgeRow is a job that a purge found, with the number of its history
// rows.
type purgeRow struct {
	ID      int64 `db:"id"`
	History int   `db:"history"`
}

// nextBatch returns the IDs of the first jobs found that fit, with their
// history, in one batch of purgeBatch rows: at least one, unless there
// are none.
func nextBatch(found []purgeRow) []int64 {
	var ids []int64
	for rows := 0; len(ids) < len(found); {
		rows += 1 + found[len(ids)].History
		if rows > purgeBatch && len(ids) > 0 {
			break
		}
		ids = append(ids, found[len(ids)].ID)
	}
	return ids
}

// deleteBatch deletes in one transaction, with their history, those of
// the jobs ids that are still in the given states and finished at or
// before cutoff (Unix ms), and returns how many it deleted.
func (q *Queue) deleteBatch(ctx context.Context, ids []int64, states []State, cutoff int64) (int, error) {
	var deleted []int64
	err := q.write(ctx, func(tx execer) error {
		deleted = deleted[:0]
		// The conditions again: a dead job may have been replayed since.
		if err := selectIn(ctx, tx, &deleted, deleteJobsSQL, ids, states, cutoff); err != nil {
			return err
		}
		if len(deleted) == 0 {
			return nil
		}
		return execIn(ctx, tx, deleteHistorySQL, deleted)
	})
	if err != nil {
		return 0, err
	}
	return len(deleted), nil
}

const expiredKeysSQL = `SELECT key FROM litequeue_keys WHERE expires_at <= ? LIMIT ?`

const deleteKeysSQL = `DELETE FROM litequeue_keys WHERE key IN (?) AND expires_at <= ? RETURNING key`

// purgeKeys deletes the expired idempotency keys and returns how many.
func (q *Queue) purgeKeys(ctx context.Context) (int, error) {
	total := 0
	for {
		now := ms(q.now())
		var keys []string
		if err := q.db.SelectContext(ctx, &keys, expiredKeysSQL, now, purgeBatch); err != nil {
			return total, err
		}
		if len(keys) == 0 {
			return total, nil
		}
		var deleted []string
		err := q.write(ctx, func(tx execer) error {
			deleted = deleted[:0]
			// The expiry again: Mark may have extended a key since.
			return selectIn(ctx, tx, &deleted, deleteKeysSQL, keys, now)
		})
		if err != nil {
			return total, err
		}
		total += len(deleted)
		if len(keys) < purgeBatch {
			return total, nil
		}
	}
}

// selectIn runs a query whose (?) lists take slices, on the pool or in a
// transaction.
func selectIn(ctx context.Context, db execer, dest any, query string, args ...any) error {
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return err
	}
	return db.SelectContext(ctx, dest, query, args...)
}

// execIn runs a statement whose (?) lists take slices.
func execIn(ctx context.Context, db execer, query string, args ...any) error {
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, query, args...)
	return err
}
