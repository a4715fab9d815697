package litequeue

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The failures of each breaker that Queue.Breakers shows: counted in the
// kind's history, over the Window of the breaker that the workers use —
// this Queue's handler's, else the one a worker recorded (recorded.go).

// countFailures sets, in out, each breaker's Failures, Threshold and
// Window at now (see BreakerStats). A breaker whose options it cannot
// find — no handler here, none recorded — is counted over the default
// Window.
func (g *gate) countFailures(ctx context.Context, ex store.Execer, out map[string]BreakerStats, now time.Time) error {
	if len(out) == 0 {
		return nil
	}
	recorded, err := g.recordedBreakers(ctx, ex)
	if err != nil {
		return err
	}
	for kind, b := range out {
		b.Window = DefaultBreakerWindow
		if cfg := cmp.Or(g.kindBreaker(kind), recorded[kind]); cfg != nil {
			b.Window, b.Threshold = cfg.Window, cfg.Failures
		}
		since := b.OpenedAt.Add(-b.Window) // those that opened it, and its failed probes
		if b.State == breakerClosed {
			r, err := g.breakerRow(ctx, ex, kind)
			if err != nil {
				return err
			}
			since = now.Add(-b.Window)
			if r != nil && store.FromMS(r.OpenUntil).After(since) {
				since = store.FromMS(r.OpenUntil) // it closed then
			}
		}
		n, err := store.FailedSince(ctx, ex, kind, store.MS(since))
		if err != nil {
			return fmt.Errorf("count failures: %w", err)
		}
		b.Failures = n
		out[kind] = b
	}
	return nil
}

// recordedBreakers returns the breakers of the kinds that workers
// recorded, by kind.
func (g *gate) recordedBreakers(ctx context.Context, ex store.Execer) (map[string]*Breaker, error) {
	out := make(map[string]*Breaker)
	if !g.st.info.Recorded {
		return out, nil
	}
	rows, err := store.Policies(ctx, ex)
	if err != nil {
		return nil, fmt.Errorf("read recorded policies: %w", err)
	}
	for _, r := range rows {
		if r.Scope != recordedKind {
			continue
		}
		if p, err := decodeRecorded(r); err == nil && p.Kind.Breaker != nil {
			out[r.Name] = p.Kind.Breaker
		}
	}
	return out, nil
}
