package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Expiry: a job enqueued with ExpireAfter(d), or of a kind handled
// WithExpiry(d), must start within d of the moment it is first due, its
// RunAt at enqueue; litequeue_jobs.expires_at holds that moment. A pending
// job whose expires_at has come is expired (see expire in decide.go): by
// the next claim of any Queue on the file or server, in the claim's own
// transaction before it claims, so that no claim ever starts it; and by
// the janitor's sweep, so that it does not wait for a worker of its kind.
// The rule holds for every start, not just the first: a retry or a snooze
// that would run at or after expires_at expires instead, and so does a
// Replay or a RunNow after it. NextDue does not report expiries: Work's
// janitor runs at least once a minute, and RunDue's after each call.

// ExpireAfter makes the job expire if it has not started within d of the
// moment it is first due (its [Job.RunAt] at enqueue: now, or as [Delay] or
// [At] set it). At that moment a pending job becomes [Expired], with a
// history row of outcome [OutcomeExpired] and the event job.expired; it is
// not retried and not dead-lettered. The same holds for every later start:
// a retry, a snooze, a [Queue.Replay] or a [Queue.RunNow] due at or after
// the expiry expires instead of running, as a job that is late is of no
// use. A run that started before the expiry is never cut short by it.
// ExpireAfter wins over the kind's [WithExpiry]. [Queue.Enqueue] refuses a
// d that is not positive, or that puts the expiry past the latest storable
// time (see At).
func ExpireAfter(d time.Duration) EnqueueOption {
	return func(c *enqueueConfig) { c.expireAfter, c.expireSet = d, true }
}

// WithExpiry gives every job of the handler's kind that this [Queue]
// enqueues, with [Queue.Enqueue], [Queue.EnqueueMany] or [Queue.EnqueueTx]
// after [Queue.Handle], the expiry of [ExpireAfter](d), unless the call
// gives its own. It is named apart from ExpireAfter because a
// [HandlerOption] and an [EnqueueOption] are different types; it reads as
// [WithTimeout] does. Jobs enqueued by another Queue, or before Handle,
// keep what their enqueue gave them. Handle panics on a d that is not
// positive.
func WithExpiry(d time.Duration) HandlerOption {
	return func(h *handler) { h.expiry, h.expirySet = d, true }
}

// checkExpiry refuses a WithExpiry that is not positive.
func (h *handler) checkExpiry() *FieldError {
	if h.expirySet && h.expiry <= 0 {
		return &FieldError{Field: "expire_after", Value: h.expiry, Limit: time.Duration(0), kind: notPositive}
	}
	return nil
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
			events, err = expireTx(ctx, tx, j.worker, j.clock.Now(), expireBatch)
			return err
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
