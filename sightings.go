package litequeue

import "time"

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
func (s *sightings) confirmed(r *jobRow, now time.Time, wait time.Duration) bool {
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
