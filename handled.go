package litequeue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// The kinds handled on the database: each Work and RunDue records the
// kinds it has a handler for (a row of litequeue_kinds per kind), so that
// an enqueue of a kind that nobody handles — a typo, a worker not yet
// deployed — is caught before its job waits forever, also by a process
// that only enqueues: refused with Options.RefuseUnknownKinds, logged once
// without it.

// ErrUnknownKind is the cause, read with [errors.Is], of the error with
// which, under [Options.RefuseUnknownKinds], [Queue.Enqueue],
// [Queue.EnqueueTx], [Queue.EnqueueMany], [Queue.Periodic] and the same
// methods of a [Kind] refuse a kind that no handler knows: neither this
// Queue's nor that of any [Queue.Work] or [Queue.RunDue] on the database.
// The error names the kind.
var ErrUnknownKind = errors.New("litequeue: unknown kind")

// unknownKindError is ErrUnknownKind for one kind.
type unknownKindError struct{ kind string }

func (e *unknownKindError) Error() string {
	return fmt.Sprintf("kind %q has never been handled by a Work or RunDue on this database; "+
		"handle it, or enqueue without Options.RefuseUnknownKinds", e.kind)
}

func (e *unknownKindError) Unwrap() error { return ErrUnknownKind }

// recordEvery is how often a Work loop, or a RunDue, that keeps running
// writes the kinds it handles again, to refresh their last sighting; it
// writes them at once at its start and when a kind gains a handler.
const recordEvery = time.Hour

// handledKinds records the kinds that a Queue handles on its database,
// and tells an enqueue whether a kind is known there. A kind once known
// stays known for the Queue's life, so that enqueues of known kinds read
// nothing; an unknown kind is read again at each enqueue under
// RefuseUnknownKinds (each a refusal, until a worker records it), and only
// once without it, for its warning. It is safe for concurrent use.
type handledKinds struct {
	st     *storage
	reg    *registry
	clock  clock.Clock
	logger *slog.Logger
	refuse bool // Options.RefuseUnknownKinds

	policies *policyRecorder // records the policies with the kinds (recorded.go)

	mu     sync.Mutex
	known  map[string]bool // recorded on the database, by any process
	warned map[string]bool // unknown kinds logged once, without refuse
	rec    recording       // of the kinds, every recordEvery
}

// newHandledKinds returns the handled kinds of a Queue with the handlers
// of reg.
func newHandledKinds(st *storage, reg *registry, clk clock.Clock, opts *Options) *handledKinds {
	return &handledKinds{st: st, reg: reg, clock: clk, logger: opts.Logger, refuse: opts.RefuseUnknownKinds,
		policies: newPolicyRecorder(opts, reg), known: make(map[string]bool), warned: make(map[string]bool)}
}

// record writes the kinds with a handler on the Queue as handled, now, if
// there are any and the last record is recordEvery old, or has fewer
// kinds, or is of a later time (the clock went back). A read-only Queue
// records nothing.
func (h *handledKinds) record(ctx context.Context) error {
	n, now := h.reg.count(), h.clock.Now()
	h.mu.Lock()
	due := n > 0 && !now.Before(h.rec.due(n, now))
	h.mu.Unlock()
	if !due || h.st.readOnly() {
		return nil
	}
	kinds := h.reg.kinds() // Handle only adds: at least n
	err := h.st.write(ctx, func(tx store.Execer) error {
		if err := store.RecordKinds(ctx, tx, kinds, store.MS(now)); err != nil {
			return err
		}
		return h.policies.record(ctx, tx, kinds, now)
	})
	if err != nil {
		return fmt.Errorf("litequeue: record the handled kinds: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec.wrote(len(kinds), now, recordEvery)
	for _, k := range kinds {
		h.known[k] = true
	}
	return nil
}

// check returns an *unknownKindError, under refuse, if kind is unknown:
// it has no handler on the Queue and none recorded on the database.
// Without refuse it logs the first enqueue of such a kind, and returns
// nil. A read-only Queue, which enqueues nothing, checks nothing.
func (h *handledKinds) check(ctx context.Context, kind string) error {
	if h.reg.get(kind) != nil || h.st.readOnly() || h.settled(kind) {
		return nil
	}
	rows, err := store.HandledKinds(ctx, h.st.reads)
	switch {
	case err != nil && h.refuse:
		return fmt.Errorf("read the handled kinds: %w", err)
	case err != nil:
		return nil // a warning is not worth a failed enqueue
	}
	known, warn := h.learn(rows, kind)
	switch {
	case known:
		return nil
	case h.refuse:
		return &unknownKindError{kind: kind}
	case warn:
		h.logger.Warn("litequeue: enqueue of a kind never handled on this database: its jobs wait until a Work handles it",
			"kind", kind)
	}
	return nil
}

// settled reports whether check has nothing to read for kind: it is
// known, or, without refuse, was warned of already.
func (h *handledKinds) settled(kind string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.known[kind] || !h.refuse && h.warned[kind]
}

// learn adds the recorded kinds of rows to those known, and reports
// whether kind is known, and, if not, whether to warn of it: the first
// time, without refuse.
func (h *handledKinds) learn(rows []store.KindRow, kind string) (known, warn bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range rows {
		h.known[r.Kind] = true
	}
	if h.known[kind] || h.refuse || h.warned[kind] {
		return h.known[kind], false
	}
	h.warned[kind] = true
	return false, true
}

// enqueueCheck is check for an enqueue of kind, whose error it words as
// the enqueue's other errors are.
func (h *handledKinds) enqueueCheck(ctx context.Context, kind string) error {
	if err := h.check(ctx, kind); err != nil {
		return fmt.Errorf("litequeue: enqueue %s: %w", kind, err)
	}
	return nil
}

// recordKinds is record for Work's loop, which logs an error and tries
// again at its next turn.
func (p *pool) recordKinds(ctx context.Context) {
	if err := p.rn.recordKinds(ctx); err != nil && ctx.Err() == nil {
		p.rn.logger.Error("litequeue: work", "err", err)
	}
}
