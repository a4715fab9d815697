package litequeue

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// storage is a Queue's way to its database, which the parts of the Queue
// share: the engine, litequeue's read pool, and the group-commit writer
// through which every write of litequeue's goes.
type storage struct {
	eng   store.Engine
	reads *store.Pool             // litequeue's own reads, in the engine's dialect
	w     *store.Writer[*runNote] // nil on a Queue from OpenReadOnly
	info  store.Info
	// cancelled is told, after the commit, of the jobs that a write
	// cancelled because a dependency failed (see store.Resolve).
	cancelled func(rows []store.JobRow)
}

// write runs fn in a write transaction through the group-commit writer,
// or returns ErrReadOnly. fn may run more than once (see store.Writer.Do):
// it sets its results afresh each time.
func (s *storage) write(ctx context.Context, fn func(tx store.Execer) error) error {
	return s.submit(&store.Op[*runNote]{Ctx: ctx, Fn: fn})
}

// writeLight is write for a write whose loss in a power cut is harmless
// (a claim, a lease's renewal: see store.Op.Light).
func (s *storage) writeLight(ctx context.Context, fn func(tx store.Execer) error) error {
	return s.submit(&store.Op[*runNote]{Ctx: ctx, Fn: fn, Light: true})
}

// submit runs op through the writer, or returns ErrReadOnly; then it
// tells s.cancelled of the jobs that op's batch cancelled because a
// dependency failed, if op is the one the writer told.
func (s *storage) submit(op *store.Op[*runNote]) error {
	if s.readOnly() {
		return ErrReadOnly
	}
	err := s.w.Do(op)
	if len(op.Cancelled) > 0 && s.cancelled != nil {
		s.cancelled(op.Cancelled)
	}
	return err
}

// readOnly reports whether the Queue came from OpenReadOnly.
func (s *storage) readOnly() bool { return s.w == nil }

// appTx is the app's transaction t, running litequeue's SQL in the
// engine's dialect (EnqueueTx, SeenTx, MarkTx, CompleteTx).
func (s *storage) appTx(t *sqlx.Tx) *store.AppTx { return store.WrapTx(t, s.info.Dialect) }

// countEnds counts in tx, in the Queue's shard of the throughput, the
// ends that the history rows record (see store.EndOf), for the ends
// stored outside the settle of run ends: a rescue's.
func (s *storage) countEnds(ctx context.Context, tx store.Execer, rows ...*store.HistoryRow) error {
	return store.CountEnds(ctx, tx, s.w.Shard, rows)
}

// countEnd counts in tx, in the Queue's shard of the throughput, n ends
// of outcome end at now: expiries, and cancels of jobs not running (which
// add no history row).
func (s *storage) countEnd(ctx context.Context, tx store.Execer, now time.Time, end string, n int) error {
	return store.CountEnd(ctx, tx, s.w.Shard, store.MS(now), end, n)
}
