package litequeue

import (
	"context"
	"time"
)

// breakerGate shuts the kinds whose breaker is open, and lets one probe
// through a breaker whose cool-down is over.
func (q *Queue) breakerGate(ctx context.Context, tx execer, g *gate, now time.Time, claiming bool) error {
	return nil
}

// breakerClaimed marks the probe of a half-open breaker.
func (q *Queue) breakerClaimed(ctx context.Context, tx execer, leases []*lease, now time.Time) error {
	return nil
}

// breakerRan counts the end of a run of a kind with a breaker, and opens
// or closes the breaker; it returns the events of a change.
func (q *Queue) breakerRan(ctx context.Context, tx execer, d *decision, now time.Time) ([]Event, error) {
	return nil, nil
}
