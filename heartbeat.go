package litequeue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// WorkerHeartbeat is how often, on the injected clock, a [Queue.Work]
// loop records itself again in the database (see [Queue.Workers]); it
// records itself at once when it starts, and when a kind gains a
// handler. A minute is the interval at which an idle loop wakes anyway,
// for the janitor, so that the record adds no wake-up; a heartbeat more
// often than every 30 seconds would also keep the other processes on a
// file from ever finding it quiet (see [Queue.Work]). Each is one short
// write, which on a file commits without an fsync: its loss in a power
// cut loses nothing but a sighting.
const WorkerHeartbeat = time.Minute

// A heartbeat is a Work loop's record of itself in the database: its row
// of litequeue_workers, which it writes when the loop starts, then at
// most every WorkerHeartbeat, and deletes when Work returns. Only the
// loop's goroutine uses it. WorkerHeartbeat is sweepEvery, the janitor's
// interval, so that the loop beats at the wake-up it makes for the sweep.
type heartbeat struct {
	st     *storage
	reg    *registry
	clock  clock.Clock
	logger *slog.Logger
	row    store.WorkerRow
	rec    recording
}

// newHeartbeat returns the heartbeat of a Work loop with opts (resolved),
// started now, with a random ID.
func newHeartbeat(rn *runner, opts *WorkerOptions) *heartbeat {
	p := thisProcess()
	id := make([]byte, 8)
	rand.Read(id)
	now := rn.now()
	return &heartbeat{st: rn.st, reg: rn.reg, clock: rn.clock, logger: rn.logger,
		row: store.WorkerRow{ID: hex.EncodeToString(id), Name: opts.Name, Host: p.host, PID: p.pid,
			Queues: opts.Queues, Concurrency: opts.Concurrency, Started: store.MS(now)}}
}

// due returns when the next record is due, at now: now when a kind
// gained a handler or the clock went back since the last.
func (h *heartbeat) due(now time.Time) time.Time { return h.rec.due(h.reg.count(), now) }

// beat records the loop, with running handlers running, if a record is
// due. A failed record is logged, and tried again after errorBackoff.
func (h *heartbeat) beat(ctx context.Context, running int) {
	now := h.clock.Now()
	if now.Before(h.due(now)) {
		return
	}
	kinds := h.reg.kinds()
	h.row.Kinds, h.row.Running, h.row.LastSeen = kinds, running, store.MS(now)
	err := h.st.writeLight(ctx, func(tx store.Execer) error { return store.RecordWorker(ctx, tx, &h.row) })
	if err != nil {
		if ctx.Err() == nil {
			h.logger.Error("litequeue: work: record the worker", "err", err)
		}
		h.rec.next = now.Add(errorBackoff)
		return
	}
	h.rec.wrote(len(kinds), now, WorkerHeartbeat)
}

// stop deletes the loop's row: Work returns. It writes even when ctx is
// done, as Work's shutdown does.
func (h *heartbeat) stop(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if err := h.st.write(ctx, func(tx store.Execer) error { return store.DeleteWorker(ctx, tx, h.row.ID) }); err != nil {
		h.logger.Error("litequeue: work: delete the worker's record", "worker", h.row.Name, "err", err)
	}
}
