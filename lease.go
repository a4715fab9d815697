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
func (rn *runner) hold(leases ...*lease) {
	rn.heldMu.Lock()
	defer rn.heldMu.Unlock()
	for _, l := range leases {
		rn.held[l.job.ID] = l
	}
}

// unhold forgets the lease: its run has ended, been recorded or been
// abandoned, and the job is anyone's to rescue again.
func (rn *runner) unhold(l *lease) {
	rn.heldMu.Lock()
	defer rn.heldMu.Unlock()
	if rn.held[l.job.ID] == l {
		delete(rn.held, l.job.ID)
	}
}

// holds reports whether a run of this Queue holds the job's lease under
// the token.
func (rn *runner) holds(id, token int64) bool {
	rn.heldMu.Lock()
	defer rn.heldMu.Unlock()
	l, ok := rn.held[id]
	return ok && l.job.token == token
}

// renewNow asks the run of this Queue that holds the job's lease, if one
// does, to renew the lease at once.
func (rn *runner) renewNow(id int64) {
	rn.heldMu.Lock()
	defer rn.heldMu.Unlock()
	if l, ok := rn.held[id]; ok {
		select {
		case l.renewNow <- struct{}{}:
		default: // a renewal is asked for already
		}
	}
}

// holding returns how many leases this Queue's runs hold.
func (rn *runner) holding() int {
	rn.heldMu.Lock()
	defer rn.heldMu.Unlock()
	return len(rn.held)
}

// errCompletedTx is what renew returns when CompleteTx committed the run:
// no lease is left to renew, and none was lost.
var errCompletedTx = errors.New("litequeue: completed through CompleteTx")

// renew extends the lease by VisibilityTimeout. It returns ErrLeaseLost if
// the lease is no longer held, errCompletedTx if CompleteTx completed the
// job under it, and errCancelRequested if Cancel asked the job to stop (the
// lease is still renewed: the run's outcome is recorded by its holder).
func (rn *runner) renew(ctx context.Context, l *lease) error {
	var r store.Renewal
	var cancel bool
	err := rn.st.writeLight(ctx, func(tx store.Execer) (err error) {
		until := rn.now().Add(rn.visibility)
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
