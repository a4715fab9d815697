package litequeue

import (
	"context"
	"time"
)

// pauseGate shuts the paused kinds and queues.
func (q *Queue) pauseGate(ctx context.Context, tx execer, g *gate, now time.Time, claiming bool) error {
	return nil
}
