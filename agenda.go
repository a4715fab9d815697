package litequeue

import (
	"context"
	"database/sql"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// dueTimes are the next moments a worker has something to do.
type dueTimes struct {
	pending sql.NullInt64 // earliest RunAt of a claimable job
	lease   sql.NullInt64 // earliest lease expiry of a running job
	far     sql.NullInt64 // latest lease expiry of a running job
}

// needsRescue reports whether a lease has expired at now, or lies further
// ahead than any renewal could have set it: the clock went back.
func (d dueTimes) needsRescue(now time.Time, visibility time.Duration) bool {
	return d.lease.Valid && d.lease.Int64 <= store.MS(now) ||
		d.far.Valid && d.far.Int64 > store.MS(now.Add(visibility))
}

// An agenda reads a Queue's due times: for the kinds it handles, as its
// gate lets a claim take them now, and for every running job's lease.
type agenda struct {
	st    *storage
	reg   *registry
	gate  *gate
	clock clock.Clock
}

// read reads the dueTimes for the handled kinds and the given queues (nil:
// all), as the gate (gate.go) lets a claim take them now: a shut kind's
// jobs are not due until it opens. It only reads, through indexes: one
// lookup per kind and one for leases, cheap enough to poll.
func (a *agenda) read(ctx context.Context, queues []string) (dueTimes, error) {
	var due dueTimes
	leases, err := store.ReadLeaseTimes(ctx, a.st.reads, a.st.info.Flow)
	if err != nil {
		return due, err
	}
	due.lease, due.far = leases.Earliest, leases.Latest
	g, err := a.gate.admit(ctx, a.st.reads, a.reg.kinds(), a.clock.Now(), false, leases.Paused)
	if err != nil {
		return due, err
	}
	for _, kind := range g.kinds {
		t, err := store.NextPending(ctx, a.st.reads, kind, queues, g.paused)
		if err != nil {
			return due, err
		}
		due.pending = store.MinNull(due.pending, t)
	}
	if !g.opens.IsZero() {
		due.pending = store.MinNull(due.pending, sql.NullInt64{Int64: store.MS(g.opens), Valid: true})
	}
	return due, nil
}
