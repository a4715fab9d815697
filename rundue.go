package litequeue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// RunDue runs, in the caller's goroutine, every job that is due now, one at
// a time in priority, then RunAt, then ID order, until none is due — also
// retries that become due during the call, as a failure with a delay of 0
// does. Each handler runs on a goroutine of its own so that its timeout can
// abandon it; RunDue waits for it or for the timeout. It first rescues
// expired leases, re-reads the clock before each claim, claims only kinds
// with a handler on this Queue, and returns the number of handler runs
// (timed-out runs count; rescues do not). After the runs it enforces
// retention (DeadTTL, KeepFinished, expired idempotency keys). With a mock
// clock, a test steps a schedule with NextDue, clock.Set and RunDue,
// deterministically.
//
// Close stops RunDue from claiming and shuts its run down as Work's
// shutdown does, with a grace of DefaultShutdownGrace on the injected
// clock: then the handler's context is cancelled, and a job whose handler
// returns is released without using a try; after a further 5s a handler
// that has not returned is abandoned, and its job comes back through lease
// expiry. RunDue then returns its runs and ErrClosed.
func (q *Queue) RunDue(ctx context.Context) (int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	runs, err := q.runDue(ctx)
	if err != nil {
		return runs, err
	}
	if err := q.sweep(ctx); err != nil {
		return runs, fmt.Errorf("litequeue: retention: %w", err)
	}
	return runs, nil
}

// runDue is RunDue's runs. It returns ErrClosed if Close began.
func (q *Queue) runDue(ctx context.Context) (int, error) {
	if _, err := q.rescue(ctx, nil); err != nil {
		return 0, fmt.Errorf("litequeue: rescue expired leases: %w", err)
	}
	if q.isClosing() {
		return 0, ErrClosed
	}
	self := &claimer{worker: q.worker}
	next := func() *claimer {
		if ctx.Err() != nil || q.isClosing() {
			return nil
		}
		return self
	}
	stopped := func() error {
		if q.isClosing() {
			return ErrClosed
		}
		return ctx.Err()
	}
	leases, err := q.claim(ctx, *self, 1)
	if err != nil {
		return 0, fmt.Errorf("litequeue: claim jobs: %w", err)
	}
	if len(leases) == 0 {
		return 0, nil
	}
	st, end := q.closeSteer()
	defer end()
	st.next = next
	runs := 0
	for l := leases[0]; l != nil; {
		runs++
		if l, err = q.execute(ctx, l, st); err != nil {
			return runs, err
		}
	}
	return runs, stopped()
}

// closeSteer returns the steer of RunDue's runs, which shuts them down
// once Close begins: it cancels the running handler's context after
// DefaultShutdownGrace on the injected clock, and abandons the run after a
// further wait of the same length (at most maxReleaseWait), as Work's drain
// does. end stops its goroutine and waits for it to return.
func (q *Queue) closeSteer() (st steer, end func()) {
	shutdown, abandon := make(chan struct{}), make(chan struct{})
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-q.closing:
		case <-done:
			return
		}
		if !q.wait(DefaultShutdownGrace, done) {
			return
		}
		close(shutdown)
		if q.wait(min(DefaultShutdownGrace, maxReleaseWait), done) {
			close(abandon)
		}
	}()
	return steer{shutdown: shutdown, abandon: abandon}, func() {
		close(done)
		<-exited
	}
}

// wait waits d on the injected clock and reports true, or false if done
// is closed first.
func (q *Queue) wait(d time.Duration, done <-chan struct{}) bool {
	t := q.clock.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// NextDue reports the earliest moment RunDue would have work: the RunAt of
// a pending job of a kind with a handler on this Queue, or the lease expiry
// of a running job, whichever is first. ok is false when there is neither.
// The time may lie in the past: the work is due now.
func (q *Queue) NextDue(ctx context.Context) (time.Time, bool, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	defer leave()
	due, err := q.nextDue(ctx, nil)
	if err != nil {
		return time.Time{}, false, err
	}
	next := minNull(due.pending, due.lease)
	return nullTime(next), next.Valid, nil
}

// dueTimes are the next moments a worker has something to do.
type dueTimes struct {
	pending sql.NullInt64 // earliest RunAt of a claimable job
	lease   sql.NullInt64 // earliest lease expiry of a running job
	far     sql.NullInt64 // latest lease expiry of a running job
}

// needsRescue reports whether a lease has expired at now, or lies further
// ahead than any renewal could have set it: the clock went back.
func (d dueTimes) needsRescue(now time.Time, visibility time.Duration) bool {
	return d.lease.Valid && d.lease.Int64 <= ms(now) ||
		d.far.Valid && d.far.Int64 > ms(now.Add(visibility))
}

const nextPendingSQL = `SELECT MIN(run_at) FROM litequeue_jobs WHERE state = 'pending' AND kind = ?`

const nextLeaseSQL = `SELECT MIN(lease_until), MAX(lease_until) FROM litequeue_jobs WHERE state = 'running'`

// nextDue reads dueTimes for the handled kinds and the given queues (nil:
// all). It only reads, through indexes: one lookup per kind and one for
// leases, cheap enough to poll.
func (q *Queue) nextDue(ctx context.Context, queues []string) (dueTimes, error) {
	var due dueTimes
	for _, kind := range q.kinds() {
		query, args := nextPendingSQL, []any{kind}
		if len(queues) > 0 {
			var err error
			query, args, err = sqlx.In(query+` AND queue IN (?)`, kind, queues)
			if err != nil {
				return due, err
			}
		}
		var t sql.NullInt64
		if err := q.read(ctx, &t, q.db.Rebind(query), args...); err != nil {
			return due, err
		}
		due.pending = minNull(due.pending, t)
	}
	st, err := q.reads.get(ctx, q.db, nextLeaseSQL)
	if err != nil {
		return due, err
	}
	err = st.QueryRowxContext(ctx).Scan(&due.lease, &due.far)
	return due, err
}

// read runs a prepared read of one row into dest.
func (q *Queue) read(ctx context.Context, dest any, query string, args ...any) error {
	st, err := q.reads.get(ctx, q.db, query)
	if err != nil {
		return err
	}
	return st.GetContext(ctx, dest, args...)
}

func minNull(a, b sql.NullInt64) sql.NullInt64 {
	if !a.Valid || (b.Valid && b.Int64 < a.Int64) {
		return b
	}
	return a
}
