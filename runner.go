package litequeue

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue/internal/store"
)

// A runner claims and runs a Queue's jobs, for its Work loops and RunDue:
// it leases due jobs through the gate, runs their handlers, renews their
// leases, and stores how each run ended with the other ends of its
// writer's batch, claiming the worker's next job in the same transaction.
// It holds the parts it works with; the Queue builds it (see openOn).
type runner struct {
	st         *storage
	reg        *registry
	gate       *gate
	events     *emitter
	draws      *draws
	clock      clock.Clock
	logger     *slog.Logger
	visibility time.Duration   // Options.VisibilityTimeout
	worker     string          // the default worker name: host:pid
	wake       *signal         // the Queue's idle Work loops
	closing    <-chan struct{} // closed when the Queue's Close begins
	skew       *clockCheck     // on a server, the check of the clock that times the claims
	seal       *sealer         // opens the payloads of the jobs it claims
	maxOutput  int             // Options.MaxOutput

	// The parts of the Queue's other machinery that the runner's loops
	// call: the janitor's sweep, the scheduler's slots, the rescuer, the
	// due times, and the expiry a claim makes first.
	sweep        func(ctx context.Context) error
	firePeriodic func(ctx context.Context) (time.Time, error)
	rescue       func(ctx context.Context, seen *sightings) (int, error)
	nextDue      func(ctx context.Context, queues []string) (dueTimes, error)
	expireDue    func(ctx context.Context, tx store.Execer, worker string, now time.Time) ([]Event, error)
	recordKinds  func(ctx context.Context) error // the handled kinds' record

	heldMu sync.Mutex
	held   map[int64]*lease // by job ID, each lease this Queue's runs hold

	// sleepHook, for tests only (see export_test.go), is told of each Work
	// loop that begins to wait with room for a job.
	sleepHook atomic.Pointer[func(queues []string, running int64)]
}

// now reads the injected clock.
func (rn *runner) now() time.Time { return rn.clock.Now() }

// isClosing reports whether the Queue's Close has begun.
func (rn *runner) isClosing() bool {
	select {
	case <-rn.closing:
		return true
	default:
		return false
	}
}

// Redecide is the settle's step that decides the end e again on the job's
// row as it is, which changed since the claim: completed by CompleteTx
// under the same lease (the completion stands, and only the history row
// is added), or asked to stop by Cancel. It writes the row; the settle
// adds the history row. A run that lost its lease meanwhile writes
// nothing, and reports false.
func (rn *runner) Redecide(ctx context.Context, tx store.Execer, e *store.RunEnd[*runNote]) (bool, error) {
	n := e.Note
	n.redecided = nil
	row, _, err := holder(ctx, tx, n.job)
	if errors.Is(err, ErrLeaseLost) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	d := decide(row, n.end, rn.now())
	if err := storeRow(ctx, tx, &d); err != nil {
		return false, err
	}
	e.After, e.History, n.redecided = d.after, d.history, &d
	return true, nil
}

// Ran is the settle's step that tells the gate of the stored run ends of
// a writer batch whose kind it counts (see gate.ran).
func (rn *runner) Ran(ctx context.Context, tx store.Execer, ends []*store.RunEnd[*runNote]) error {
	now := rn.now()
	for _, e := range ends {
		d := decision{after: e.After, history: e.History}
		events, err := rn.gate.ran(ctx, tx, &d, now)
		if err != nil {
			return err
		}
		e.Note.gated = events
	}
	return nil
}

// started fires the job.started events of new leases, claimed at now.
func (rn *runner) started(now time.Time, leases ...*lease) {
	if rn.events.on == nil {
		return
	}
	events := make([]Event, len(leases))
	for i, l := range leases {
		events[i] = Event{Type: eventStarted, Job: viewOf(&l.row), At: now} // the payload as stored, as every event's
	}
	rn.events.emit(events...)
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
