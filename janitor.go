package litequeue

import (
	"context"
	"os"
	"time"

	"github.com/jmoiron/sqlx"
)

// Retention: finished jobs are kept for a while, then purged with their
// history by the janitor, which RunDue calls after each call's runs and
// Work at most once a minute on the injected clock. A job finished at T is
// kept while the clock reads before T+TTL and purged from T+TTL on (the TTL
// is DeadTTL for dead jobs, KeepFinished for completed, discarded and
// cancelled ones); an idempotency key is purged once it has expired. The
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
var finishedStates = []State{Completed, Discarded, Cancelled}

// sweep purges what retention no longer keeps: dead jobs after DeadTTL,
// other finished jobs after KeepFinished, and expired idempotency keys.
func (q *Queue) sweep(ctx context.Context) error {
	dead, err := q.purgeJobs(ctx, []State{Dead}, q.opts.DeadTTL)
	if err != nil {
		return err
	}
	finished, err := q.purgeJobs(ctx, finishedStates, q.opts.KeepFinished)
	if err != nil {
		return err
	}
	keys, err := q.purgeKeys(ctx)
	if err != nil {
		return err
	}
	if dead+finished+keys > 0 {
		q.opts.Logger.Info("litequeue: retention purged", "dead", dead, "finished", finished, "keys", keys)
	}
	if err := q.vacuum(ctx); err != nil {
		return err
	}
	q.walGrowth()
	return nil
}

// Vacuum: purged jobs leave free pages in the file. New inserts reuse
// them, but after a burst (a million jobs done and purged) the file would
// keep its peak size for good. In a file with auto_vacuum=INCREMENTAL
// (every file Open created, see migrate) the janitor gives free pages back
// to the file system, vacuumStep at a time, once they are a quarter of the
// file and at least vacuumMinPages: small enough that a busy queue, whose
// free pages are soon reused, is left alone.
const (
	vacuumStep     = 2048 // pages (8 MiB of 4 KiB pages) per sweep
	vacuumMinPages = 256
)

// The vacuum's pragmas are SQLite's own (PostgreSQL vacuums by itself);
// auto_vacuum reads 2 for INCREMENTAL.
const (
	autoVacuumSQL = `PRAGMA auto_vacuum`
	pageCountSQL  = `PRAGMA page_count`
	freePagesSQL  = `PRAGMA freelist_count`
	vacuumSQL     = `PRAGMA incremental_vacuum(2048)` // vacuumStep
	checkpointSQL = `PRAGMA wal_checkpoint(PASSIVE)`
)

// vacuum gives up to vacuumStep free pages back to the file system, if the
// file allows it and enough pages are free. In WAL mode the file shrinks on
// disk when a checkpoint copies the vacuum's pages back, so vacuum asks for
// one at once (PASSIVE: it waits for no one, and does what readers allow).
func (q *Queue) vacuum(ctx context.Context) error {
	var mode, pages, free int
	if err := q.db.GetContext(ctx, &mode, autoVacuumSQL); err != nil || mode != 2 {
		return err
	}
	if err := q.db.GetContext(ctx, &pages, pageCountSQL); err != nil {
		return err
	}
	if err := q.db.GetContext(ctx, &free, freePagesSQL); err != nil {
		return err
	}
	if free < vacuumMinPages || free*4 < pages {
		return nil
	}
	err := q.write(ctx, func(tx execer) error {
		_, err := tx.ExecContext(ctx, vacuumSQL)
		return err
	})
	if err != nil {
		return err
	}
	_, err = q.db.ExecContext(ctx, checkpointSQL)
	return err
}

// walGrowth logs a warning when the -wal file has grown past walWarnSize,
// and again each time it doubles. SQLite's checkpoints cannot empty the
// WAL while a connection, in any process, holds a read transaction begun
// before the frames they would copy back: an unclosed *sql.Rows on the
// DB() of any Queue (an OpenReadOnly one too), or another program reading
// the file. Every commit then
// adds to the WAL — about 40 KB per job run — until that reader ends; the
// next checkpoint empties it, and journal_size_limit cuts the file back.
func (q *Queue) walGrowth() {
	fi, err := os.Stat(q.path + "-wal")
	if err != nil {
		return
	}
	size := fi.Size()
	switch last := q.walWarned.Load(); {
	case size < walWarnSize:
		q.walWarned.Store(0)
	case size >= 2*last:
		q.walWarned.Store(size)
		q.opts.Logger.Warn("litequeue: the WAL keeps growing: a read transaction held open (an unclosed *sql.Rows?) keeps checkpoints from emptying it",
			"path", q.path+"-wal", "bytes", size)
	}
}

const expiredJobsSQL = `SELECT id,
	(SELECT COUNT(*) FROM litequeue_attempts a WHERE a.job_id = j.id) AS history
	FROM litequeue_jobs j WHERE state IN (?) AND finished_at <= ? LIMIT ?`

const deleteJobsSQL = `DELETE FROM litequeue_jobs
	WHERE id IN (?) AND state IN (?) AND finished_at <= ? RETURNING id`

const deleteHistorySQL = `DELETE FROM litequeue_attempts WHERE job_id IN (?)`

// purgeJobs deletes, with their history, the jobs in the given terminal
// states that finished at least age ago, and returns how many it deleted.
func (q *Queue) purgeJobs(ctx context.Context, states []State, age time.Duration) (int, error) {
	total := 0
	for {
		cutoff := ms(q.now().Add(-age))
		var found []struct {
			ID      int64 `db:"id"`
			History int   `db:"history"`
		}
		if err := selectIn(ctx, q.db, &found, expiredJobsSQL, states, cutoff, purgeBatch); err != nil {
			return total, err
		}
		// Take jobs while they and their history fit in one batch.
		var ids []int64
		for rows := 0; len(ids) < len(found); {
			rows += 1 + found[len(ids)].History
			if rows > purgeBatch && len(ids) > 0 {
				break
			}
			ids = append(ids, found[len(ids)].ID)
		}
		if len(ids) == 0 {
			return total, nil
		}
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
			return total, err
		}
		total += len(deleted)
		if len(ids) == len(found) && len(found) < purgeBatch {
			return total, nil
		}
	}
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
	return db.SelectContext(ctx, dest, db.Rebind(query), args...)
}

// execIn runs a statement whose (?) lists take slices.
func execIn(ctx context.Context, db execer, query string, args ...any) error {
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, db.Rebind(query), args...)
	return err
}
