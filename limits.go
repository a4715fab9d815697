package litequeue

import (
	"context"
	"time"
)

// limitGate caps the kinds with a limit on their runs.
func (q *Queue) limitGate(ctx context.Context, tx execer, g *gate, now time.Time, claiming bool) error {
	return nil
}

// limitClaimed counts the starts of the claimed runs of rate-limited kinds.
func (q *Queue) limitClaimed(ctx context.Context, tx execer, leases []*lease, now time.Time) error {
	return nil
}
