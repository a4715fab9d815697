package litequeue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
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
var finishedStates = []string{string(Completed), string(Discarded), string(Cancelled), string(Expired)}

// A janitor keeps a Queue's database tidy: it expires the pending jobs
// whose expiry has come (see expire.go), purges what retention no longer
// keeps, and has the engine give the room back. It holds no state of its
// own between calls.
type janitor struct {
	st      *storage
	clock   clock.Clock
	events  *emitter
	logger  *slog.Logger
	worker  string      // the name the expiries record
	classes []keepClass // the finished jobs by the TTLs that apply to them
	skew    *clockCheck // on a server, the check of the clock that times the purges
}

// newJanitor returns the janitor of the database st, which keeps the
// finished jobs as opts (resolved) say.
func newJanitor(st *storage, clk clock.Clock, events *emitter, worker string, opts *Options) *janitor {
	return &janitor{st: st, clock: clk, events: events, logger: opts.Logger, worker: worker,
		classes: keepClasses(opts.Retention, opts.KeepFinished, opts.DeadTTL)}
}

// sweep expires the pending jobs whose expiry has come (see expire.go),
// of every kind, and purges what retention no longer keeps: dead jobs
// after DeadTTL, other finished jobs after KeepFinished, expired
// idempotency keys, and the throughput's counts after keepThroughput;
// on a server it folds the job counts of the sessions gone (see
// store.FoldCounts). Timed by the Queue's clock, it does nothing while that is too far from
// a server's (see clockCheck).
func (j *janitor) sweep(ctx context.Context) error {
	if err := j.skew.check(ctx, j.st.reads); err != nil {
		return err
	}
	expired, err := j.expireSweep(ctx)
	if err != nil {
		return err
	}
	if expired > 0 {
		j.logger.Info("litequeue: expired jobs not started by their expiry", "jobs", expired)
	}
	dead, finished, err := j.purgeFinished(ctx)
	if err != nil {
		return err
	}
	keys, err := j.purgeKeys(ctx)
	if err != nil {
		return err
	}
	if _, err := j.purgeThroughput(ctx); err != nil {
		return err
	}
	if dead+finished+keys > 0 {
		j.logger.Info("litequeue: retention purged", "dead", dead, "finished", finished, "keys", keys)
	}
	if err := j.resolveStranded(ctx); err != nil {
		return err
	}
	if err := j.forgetWorkers(ctx); err != nil {
		return err
	}
	if err := store.FoldCounts(ctx, j.st.eng, j.st.write); err != nil {
		return err
	}
	return j.st.eng.Compact(ctx, j.st.write)
}

// strandedBatch bounds the ended dependencies one sweep tells their
// waiting dependents of.
const strandedBatch = 100

// resolveStranded tells the dependents still waiting on jobs that ended,
// or are gone, without telling them (raw SQL on the jobs: litequeue's own
// writes tell them in the commit of the end, see store.Resolve) of those
// ends, reading each job again in the write: so that no job waits
// forever on a job that will not complete. It logs a warning when it
// finds any.
func (j *janitor) resolveStranded(ctx context.Context) error {
	found, err := store.Stranded(ctx, j.st.reads, strandedBatch)
	if err != nil || len(found) == 0 {
		return err
	}
	now := store.MS(j.clock.Now())
	var released int
	err = j.st.write(ctx, func(tx store.Execer) error {
		ended := make([]store.Ended, 0, len(found))
		for _, id := range found {
			row, err := store.LockJob(ctx, tx, id)
			switch {
			case errors.Is(err, store.ErrNoRows):
				ended = append(ended, store.Ended{ID: id, State: store.Deleted, At: now})
			case err != nil:
				return err
			case store.Terminal(row.State):
				ended = append(ended, store.Ended{ID: id, State: row.State, At: now})
			}
		}
		released, err = store.Resolve(ctx, tx, ended)
		return err
	})
	if err == nil {
		j.logger.Warn("litequeue: jobs waited on dependencies that had ended without telling them (raw SQL?): told them now",
			"dependencies", len(found), "released", released)
	}
	return err
}

// purgeFinished purges, class by class, the dead jobs past their DeadTTL
// and the other finished jobs past their KeepFinished, and returns how
// many of each it deleted.
func (j *janitor) purgeFinished(ctx context.Context) (dead, finished int, err error) {
	deadStates := []string{string(Dead)}
	for _, c := range j.classes {
		n, err := j.purgeClass(ctx, deadStates, c.deadTTL, c.jobs)
		dead += n
		if err != nil {
			return dead, finished, err
		}
		n, err = j.purgeClass(ctx, finishedStates, c.keepFinished, c.jobs)
		finished += n
		if err != nil {
			return dead, finished, err
		}
	}
	return dead, finished, nil
}

// purge deletes, with their history, the jobs in the given terminal
// states that finished at least age ago, and returns how many it deleted.
func (j *janitor) purge(ctx context.Context, states []State, age time.Duration) (int, error) {
	names := make([]string, len(states))
	for i, s := range states {
		names[i] = string(s)
	}
	return j.purgeClass(ctx, names, age, store.Class{})
}

// purgeClass is purge for the jobs of class c; it deletes none for an
// age of KeepForever.
func (j *janitor) purgeClass(ctx context.Context, states []string, age time.Duration, c store.Class) (int, error) {
	if age == KeepForever {
		return 0, nil
	}
	total := 0
	for {
		cutoff := store.MS(j.clock.Now().Add(-age))
		found, err := store.FinishedJobs(ctx, j.st.reads, c, states, cutoff, purgeBatch)
		if err != nil {
			return total, err
		}
		ids := fitBatch(found, purgeBatch)
		if len(ids) == 0 {
			return total, nil
		}
		n, err := j.deleteBatch(ctx, ids, states, cutoff)
		total += n
		if err != nil {
			return total, err
		}
		if len(ids) == len(found) && len(found) < purgeBatch {
			return total, nil
		}
	}
}

// deleteBatch deletes, in one transaction, those of the jobs ids that are
// still in one of the states and finished at or before cutoff (a dead job
// may have been replayed since it was found), with their history, and
// returns how many it deleted.
func (j *janitor) deleteBatch(ctx context.Context, ids []int64, states []string, cutoff int64) (int, error) {
	var deleted int
	err := j.st.write(ctx, func(tx store.Execer) (err error) {
		deleted, err = store.DeleteFinished(ctx, tx, ids, states, cutoff, store.MS(j.clock.Now()))
		return err
	})
	return deleted, err
}

// fitBatch returns the IDs of the first of the jobs found that fit, with
// their history, in one transaction of at most rows rows; at least the
// first job's, however long its history.
func fitBatch(found []store.Finished, rows int) []int64 {
	var ids []int64
	for n := 0; len(ids) < len(found); {
		n += 1 + found[len(ids)].History
		if n > rows && len(ids) > 0 {
			break
		}
		ids = append(ids, found[len(ids)].ID)
	}
	return ids
}

// purgeKeys deletes the expired idempotency keys and returns how many.
func (j *janitor) purgeKeys(ctx context.Context) (int, error) {
	total := 0
	for {
		now := store.MS(j.clock.Now())
		keys, err := store.ExpiredKeys(ctx, j.st.reads, now, purgeBatch)
		if err != nil || len(keys) == 0 {
			return total, err
		}
		var deleted int
		err = j.st.write(ctx, func(tx store.Execer) (err error) {
			// The expiry again: Mark may have extended a key since.
			deleted, err = store.DeleteExpiredKeys(ctx, tx, keys, now)
			return err
		})
		if err != nil {
			return total, err
		}
		total += deleted
		if len(keys) < purgeBatch {
			return total, nil
		}
	}
}

// forgetWorkersAfter is how long the janitor keeps the row of a worker
// that stopped recording itself without deleting it (see heartbeat.go): a
// process killed, a machine gone.
const forgetWorkersAfter = 24 * time.Hour

// forgetWorkers deletes the rows of the workers silent for
// forgetWorkersAfter. With none it only reads.
func (j *janitor) forgetWorkers(ctx context.Context) error {
	cutoff := store.MS(j.clock.Now().Add(-forgetWorkersAfter))
	ids, err := store.SilentWorkers(ctx, j.st.reads, cutoff)
	if err != nil || len(ids) == 0 {
		return err
	}
	err = j.st.write(ctx, func(tx store.Execer) error { return store.DeleteSilentWorkers(ctx, tx, ids, cutoff) })
	if err == nil {
		j.logger.Info("litequeue: forgot workers silent for a day", "workers", len(ids))
	}
	return err
}

// expireBatch bounds the jobs one statement of expireTx reads.
const expireBatch = purgeBatch

// expireDue expires in tx every pending job whose expiry is at or before
// now, as worker, and returns their job.expired events, to fire after the
// commit. The claim calls it before it claims, in its transaction.
func expireDue(ctx context.Context, tx store.Execer, worker string, now time.Time) ([]Event, error) {
	var events []Event
	for {
		got, err := expireTx(ctx, tx, worker, now, expireBatch)
		events = append(events, got...)
		if err != nil || len(got) < expireBatch {
			return events, err
		}
	}
}

// expireTx expires in tx up to limit pending jobs whose expiry is at or
// before now, and returns their events.
func expireTx(ctx context.Context, tx store.Execer, worker string, now time.Time, limit int) ([]Event, error) {
	rows, err := store.DueExpiries(ctx, tx, store.MS(now), limit)
	if err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	events := make([]Event, 0, len(rows))
	for i := range rows {
		d := expire(&rows[i], worker, now)
		if err := storeDecision(ctx, tx, &d); err != nil {
			return nil, fmt.Errorf("expire job %d: %w", rows[i].ID, err)
		}
		events = append(events, d.event)
	}
	return events, nil
}

// expireSweep is the janitor's expiry: it expires every pending job whose
// expiry has come, of any kind, in transactions of at most expireBatch
// jobs, firing job.expired after each commit, and returns how many. With
// nothing to expire it only reads.
func (j *janitor) expireSweep(ctx context.Context) (int, error) {
	total := 0
	for {
		due, err := store.ExpiryDue(ctx, j.st.reads, store.MS(j.clock.Now()))
		if err != nil || !due {
			return total, err
		}
		var events []Event
		err = j.st.write(ctx, func(tx store.Execer) (err error) {
			now := j.clock.Now()
			if events, err = expireTx(ctx, tx, j.worker, now, expireBatch); err != nil {
				return err
			}
			return j.st.countEnd(ctx, tx, now, store.EndExpired, len(events))
		})
		if err != nil {
			return total, err
		}
		j.events.emit(events...)
		total += len(events)
		if len(events) < expireBatch {
			return total, nil
		}
	}
}

// keepThroughput is how long the counts of a minute are kept: a day, and
// the hour of the first span of a day's figures per hour.
const keepThroughput = 25 * time.Hour

// throughputBatch bounds the minutes of counts that one transaction of
// the janitor deletes: six outcomes in each, times the writers that
// counted in it.
const throughputBatch = 10

// purgeThroughput deletes the counts older than keepThroughput, a few
// minutes of them a transaction, found first with a read that takes no
// lock, and returns how many rows it deleted.
func (j *janitor) purgeThroughput(ctx context.Context) (int, error) {
	total := 0
	for {
		cutoff := store.MS(j.clock.Now().Add(-keepThroughput))
		through, found, err := store.OldThroughput(ctx, j.st.reads, cutoff, throughputBatch)
		if err != nil || !found {
			return total, err
		}
		var n int
		err = j.st.write(ctx, func(tx store.Execer) (err error) {
			n, err = store.DeleteThroughput(ctx, tx, through)
			return err
		})
		total += n
		if err != nil {
			return total, err
		}
	}
}
