package litequeue

import (
	"context"
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

	// The parts of the Queue's other machinery that the runner's loops
	// call: the janitor's sweep, the scheduler's slots, the rescuer, the
	// due times, and the expiry a claim makes first.
	sweep        func(ctx context.Context) error
	firePeriodic func(ctx context.Context) (time.Time, error)
	rescue       func(ctx context.Context, seen *sightings) (int, error)
	nextDue      func(ctx context.Context, queues []string) (dueTimes, error)
	expireDue    func(ctx context.Context, tx store.Execer, worker string, now time.Time) ([]Event, error)

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
