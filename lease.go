package litequeue

import (
	"context"
	"errors"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// A lease is a worker's claim on one running job. Its fencing token is the
// job's token at claim time: every later write by the holder checks it, so a
// holder whose lease expired (and whose job another worker rescued and
// claimed again) changes nothing and gets ErrLeaseLost.
//
// At claim time the worker writes what a rescuer needs should the run be
// lost — the effective MaxTries and the delay to apply (retry_delay) — so
// any process can rescue the job without knowing its handler or policy. The
// same delay is applied if the run fails by returning an error (see
// decide).
type lease struct {
	row     store.JobRow // the job's row as claimed: still its row while the lease holds
	job     *Job
	h       *handler
	started time.Time
	worker  string
	// renewNow, sent to without blocking, asks the run to renew its lease
	// at once rather than at its next turn: Cancel in this Queue uses it so
	// that the run sees the request without waiting for the renewal.
	renewNow chan struct{}
}

// hold records that runs of this Queue hold the leases, from the commit of
// their claim until execute returns (see unhold). rescue leaves such a
// lease alone however expired it looks: its holder is alive, in this
// process, and renews it. A lease looks expired while its holder lives
// when the clock jumps: forward past the lease, or, with a mock clock whose
// timers move with it, back (the renewal then waits for the clock to catch
// up, while the rescue cut the lease to one timeout).
func (q *Queue) hold(leases ...*lease) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	for _, l := range leases {
		q.held[l.job.ID] = l
	}
}

// unhold forgets the lease: its run has ended, been recorded or been
// abandoned, and the job is anyone's to rescue again.
func (q *Queue) unhold(l *lease) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	if q.held[l.job.ID] == l {
		delete(q.held, l.job.ID)
	}
}

// holds reports whether a run of this Queue holds the job's lease under
// the token.
func (q *Queue) holds(id, token int64) bool {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	l, ok := q.held[id]
	return ok && l.job.token == token
}

// renewNow asks the run of this Queue that holds the job's lease, if one
// does, to renew the lease at once.
func (q *Queue) renewNow(id int64) {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	if l, ok := q.held[id]; ok {
		select {
		case l.renewNow <- struct{}{}:
		default: // a renewal is asked for already
		}
	}
}

// holding returns how many leases this Queue's runs hold.
func (q *Queue) holding() int {
	q.heldMu.Lock()
	defer q.heldMu.Unlock()
	return len(q.held)
}

// errCompletedTx is what renew returns when CompleteTx committed the run:
// no lease is left to renew, and none was lost.
var errCompletedTx = errors.New("litequeue: completed through CompleteTx")

// renew extends the lease by VisibilityTimeout. It returns ErrLeaseLost if
// the lease is no longer held, errCompletedTx if CompleteTx completed the
// job under it, and errCancelRequested if Cancel asked the job to stop (the
// lease is still renewed: the run's outcome is recorded by its holder).
func (q *Queue) renew(ctx context.Context, l *lease) error {
	var r store.Renewal
	var cancel bool
	err := q.st.writeLight(ctx, func(tx store.Execer) (err error) {
		until := q.now().Add(q.opts.VisibilityTimeout)
		r, cancel, err = store.Renew(ctx, tx, l.job.ID, l.job.token, store.MS(l.job.CreatedAt), store.MS(until))
		return err
	})
	switch {
	case err != nil:
		return err
	case r == store.Completed:
		return errCompletedTx
	case r == store.Lost:
		return ErrLeaseLost
	case cancel:
		return errCancelRequested
	}
	return nil
}
