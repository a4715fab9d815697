package litequeue

import (
	"context"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// Rescue: a lease that expired is a lost run. Any process rescues it,
// without its handler or policy: the claim wrote what decide needs.
//
// The look through the expired leases reads them without taking their
// rows: most of what a Work loop sees expired it does not rescue yet (see
// sightings), and on a server a row it held would turn away the live
// holder's renewal (renewSQL skips a row held elsewhere) at the moment the
// renewal proves the holder alive. Only a lease it rescues does it take,
// as it saw it (store.LockExpired).

// rescueBatch bounds the expired leases one rescue transaction handles.
const rescueBatch = 256

// A rescuer turns a Queue's expired leases into lease_expired attempts.
// It leaves alone the leases that the Queue's own runs hold (held).
type rescuer struct {
	st         *storage
	clock      clock.Clock
	gate       *gate // counts the rescued runs' ends
	events     *emitter
	wake       *signal // the Queue's idle Work loops, woken for the jobs it rescued
	logger     *slog.Logger
	visibility time.Duration // Options.VisibilityTimeout
	held       holdings
	skew       *clockCheck // on a server, the check of the clock that times the rescues
}

// holdings are the leases a Queue's runs hold (see runner.hold): alive,
// in this process, and renewed by their holders.
type holdings interface {
	// holds reports whether a run holds the job's lease under the token.
	holds(id, token int64) bool
	// holding returns how many leases the runs hold.
	holding() int
}

// rescue turns every expired lease into a lease_expired attempt: back to
// pending after the delay the claimer chose, or dead if it was the last
// try. It needs no handler. It returns how many jobs it rescued. It leaves
// alone the leases this Queue's own runs hold (see holdings).
//
// A lease that ends further ahead than VisibilityTimeout from now can only
// come from a clock that went back (a device that booted in 1970 and then
// synced, or the reverse). Such a lease is not trusted until its far end:
// it is cut to end VisibilityTimeout from now, so a live holder keeps it by
// renewing as usual and a dead one's job comes back within one timeout.
//
// With sightings (Work), a lease is rescued only once it has been seen
// expired for confirmWait (see sightings); without (RunDue), at once.
func (r *rescuer) rescue(ctx context.Context, seen *sightings) (int, error) {
	if seen != nil {
		seen.begin()
		defer seen.end()
	}
	total := 0
	for {
		var events, gated []Event
		more := false
		err := r.st.write(ctx, func(tx store.Execer) (err error) {
			events, gated, more, err = r.rescueSome(ctx, tx, seen, events[:0], gated[:0])
			return err
		})
		if err != nil {
			return total, err
		}
		for _, ev := range events {
			r.logger.Warn("litequeue: rescued an expired lease", "job", ev.Job.ID, "kind", ev.Job.Kind, "state", ev.Job.State)
		}
		r.events.emit(events...)
		r.gate.emitRan(gated)
		total += len(events)
		if !more || len(events) == 0 {
			if total > 0 {
				r.wake.fire()
			}
			return total, nil
		}
	}
}

// rescueSome rescues, in tx, up to rescueBatch expired leases, having cut
// the leases that lie too far ahead. It appends their events to events,
// and those of the gate (see gate.ran) to gated, and reports whether more
// may be expired.
func (r *rescuer) rescueSome(ctx context.Context, tx store.Execer, seen *sightings, events, gated []Event) ([]Event, []Event, bool, error) {
	if err := r.skew.check(ctx, tx); err != nil {
		return events, gated, false, err
	}
	now := r.clock.Now()
	if err := store.ClampLeases(ctx, tx, store.MS(now.Add(r.visibility))); err != nil {
		return events, gated, false, err
	}
	// Room for the rows that are skipped: those of our own leases, and
	// those seen expired too recently to rescue.
	batch := rescueBatch + r.held.holding() + seen.waiting()
	rows, err := store.ExpiredLeases(ctx, tx, store.MS(now), batch)
	if err != nil {
		return events, gated, false, err
	}
	for i := range rows {
		row := &rows[i]
		if r.held.holds(row.ID, row.Token) {
			continue
		}
		if seen != nil && !seen.confirmed(row, now, confirmWait(r.visibility)) {
			continue
		}
		ev, more, ok, err := r.rescueOne(ctx, tx, row, now)
		if err != nil {
			return events, gated, false, err
		}
		if ok {
			events, gated = append(events, ev), append(gated, more...)
		}
	}
	return events, gated, len(rows) == batch, nil
}

// rescueOne rescues in tx at now the expired lease seen as row, if it is
// still as seen, and returns the job's event and the gate's; ok is false,
// and nothing is written, if the row changed since or another transaction
// holds it.
func (r *rescuer) rescueOne(ctx context.Context, tx store.Execer, row *store.JobRow, now time.Time) (ev Event, gated []Event, ok bool, err error) {
	if row, err = store.LockExpired(ctx, tx, row); err != nil || row == nil {
		return Event{}, nil, false, err
	}
	d := decide(row, end{kind: endExpired, started: store.FromMS(row.StartedAt), worker: row.Worker}, now)
	if err := storeDecision(ctx, tx, &d); err != nil {
		return Event{}, nil, false, err
	}
	if err := r.st.countEnds(ctx, tx, d.history); err != nil {
		return Event{}, nil, false, err
	}
	gated, err = r.gate.ran(ctx, tx, &d, now)
	return d.event, gated, true, err
}

// sightings are the expired leases a Work loop has seen and not yet
// rescued. A lease looks expired either because its holder stopped renewing
// it (the process died, or is paused) or because the wall clock jumped
// forward past it while the live holder's timers, which run on the
// monotonic clock, have not yet come to its next renewal. Rescuing it in
// the second case would run the job twice at once, in two processes.
//
// Work tells the two apart by waiting: it rescues a lease only once it has
// seen it expired, with the same token and expiry, for confirmWait — longer
// than the renewal period of a live holder, which renews every third of
// VisibilityTimeout whatever its wall clock says. A dead holder's job comes
// back that much later. RunDue does not wait: it rescues what has expired.
type sightings struct {
	seen map[int64]sighting // by job ID
	pass map[int64]bool     // the IDs seen expired in the current look
}

type sighting struct {
	token, leaseUntil int64
	first             time.Time // when first seen expired, on the injected clock
}

// confirmWait is how long Work sees a lease expired before it rescues it:
// half a VisibilityTimeout, one renewal period and a half.
func confirmWait(visibility time.Duration) time.Duration { return visibility / 2 }

// begin starts a look through the expired leases.
func (s *sightings) begin() {
	if s.seen == nil {
		s.seen = make(map[int64]sighting)
	}
	s.pass = make(map[int64]bool)
}

// confirmed reports whether the expired lease in row r has been seen, with
// the same token and expiry, since at least wait before now; otherwise it
// notes the sighting. The clock going back starts the wait afresh.
func (s *sightings) confirmed(r *store.JobRow, now time.Time, wait time.Duration) bool {
	s.pass[r.ID] = true
	old, ok := s.seen[r.ID]
	if !ok || old.token != r.Token || old.leaseUntil != r.LeaseUntil || now.Before(old.first) {
		s.seen[r.ID] = sighting{token: r.Token, leaseUntil: r.LeaseUntil, first: now}
		return false
	}
	if now.Sub(old.first) < wait {
		return false
	}
	delete(s.seen, r.ID)
	return true
}

// end forgets the sightings of leases the look did not find expired: they
// were renewed, settled or rescued by another process.
func (s *sightings) end() {
	for id := range s.seen {
		if !s.pass[id] {
			delete(s.seen, id)
		}
	}
	s.pass = nil
}

// waiting returns how many sightings wait to be confirmed; 0 for nil
// sightings (RunDue's).
func (s *sightings) waiting() int {
	if s == nil {
		return 0
	}
	return len(s.seen)
}

// ripens returns when the earliest sighting will have waited long enough;
// zero if there is none.
func (s *sightings) ripens(wait time.Duration) time.Time {
	var at time.Time
	for _, v := range s.seen {
		if t := v.first.Add(wait); at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at
}
