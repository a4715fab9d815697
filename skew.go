package litequeue

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// Clock skew. On a server, every process times the leases it takes and
// ends by its own clock: a claim writes lease_until from it, a rescue ends
// the leases that have run out by it, and cuts those that end further
// ahead than VisibilityTimeout (rescue). Two machines whose clocks differ
// move each other's leases by the difference. A live holder renews its
// lease every third of VisibilityTimeout, so the lease always has two
// thirds of it left by the holder's clock; two clients each within a
// quarter of VisibilityTimeout of the server's clock differ by at most a
// half, and neither sees the other's live lease run out, with a sixth to
// spare for a renewal's commit; a dead holder's job comes back at most a
// quarter late. So a Queue on a server measures how far its clock reads
// from the server's, and claims, rescues and sweeps nothing (the
// janitor's expiry and retention are timed by the same clock) while that
// is past its bound (Options.MaxClockSkew).

// skewEvery is how often, at most, a claim measures the skew: every minute
// on the injected clock, and at once when that clock went back. While the
// skew is past its bound, every claim, rescue and sweep measures it
// again, so that they resume as soon as it is back within.
const skewEvery = time.Minute

// clockCheck measures the skew of the Queue's clock against the server's
// and refuses claims, rescues and sweeps while it is past bound. A nil
// *clockCheck checks nothing: the file's Queues, and those whose clock is
// not checked (see skewBound).
type clockCheck struct {
	clock  clock.Clock
	bound  time.Duration
	server func(ctx context.Context, tx store.Execer) (time.Time, error) // reads the server's clock
	logger *slog.Logger

	mu   sync.Mutex
	at   time.Time     // when last measured, on clock; zero: never
	skew time.Duration // clock's reading minus the server's, then
}

// newClockCheck returns the check of the clock of opts on the server
// whose clock server reads; nil if opts ask for none.
func newClockCheck(opts Options, server func(context.Context, store.Execer) (time.Time, error)) *clockCheck {
	bound := skewBound(opts)
	if bound == 0 {
		return nil
	}
	return &clockCheck{clock: opts.Clock, bound: bound, server: server, logger: opts.Logger}
}

// skewBound is the bound of the skew that opts allow; 0: none checked.
func skewBound(opts Options) time.Duration {
	_, stepped := opts.Clock.(interface{ Add(time.Duration) }) // a test's mock
	switch {
	case opts.MaxClockSkew > 0:
		return opts.MaxClockSkew
	case opts.MaxClockSkew < 0, stepped:
		return 0
	}
	return opts.VisibilityTimeout / 4
}

// check returns a *ClockSkewError while the skew is past the bound,
// having measured it in tx first if it is time to (see skewEvery).
func (c *clockCheck) check(ctx context.Context, tx store.Execer) error {
	if c == nil {
		return nil
	}
	if c.due() {
		// The server's reading lies between two of the Queue's if the
		// clocks agree: the skew is how far outside them it lies, which
		// the round trip cannot make look larger than it is.
		before := c.clock.Now()
		server, err := c.server(ctx, tx)
		if err != nil {
			return fmt.Errorf("read the server's clock: %w", err)
		}
		c.measured(before, c.clock.Now(), server)
	}
	return c.refused()
}

// due reports whether it is time to measure the skew again.
func (c *clockCheck) due() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	return c.at.IsZero() || c.refusal() != nil || now.Sub(c.at) >= skewEvery || now.Before(c.at)
}

// measured keeps and logs the skew of the server's reading against the
// Queue's readings before and after it. It counts as measured before: a
// clock that jumps meanwhile is measured again at the next check.
func (c *clockCheck) measured(before, after, server time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first, was := c.at.IsZero(), c.refusal()
	c.at, c.skew = before, 0
	switch {
	case server.Before(before):
		c.skew = before.Sub(server)
	case server.After(after):
		c.skew = after.Sub(server)
	}
	c.log(first, was != nil)
}

// refused returns the *ClockSkewError of the last measure, if it was past
// the bound.
func (c *clockCheck) refused() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refusal()
}

// refusal is refused under c.mu.
func (c *clockCheck) refusal() error {
	if c.skew.Abs() <= c.bound {
		return nil
	}
	return &ClockSkewError{Skew: c.skew, Bound: c.bound}
}

// log logs the skew just measured: an error when it goes past the bound,
// and the moment it is back; a warning past half the bound; the first
// measure (at Open) as information; the others for debugging.
func (c *clockCheck) log(first, wasRefused bool) {
	args := []any{"skew", c.skew, "bound", c.bound}
	refused := c.refusal() != nil
	switch {
	case refused && !wasRefused:
		c.logger.Error("litequeue: clock skew: the clock reads too far from the server's; claiming, rescuing and purging nothing until it is back within the bound (Options.MaxClockSkew)", args...)
	case refused:
		c.logger.Debug("litequeue: clock skew: still past the bound", args...)
	case wasRefused:
		c.logger.Info("litequeue: clock skew: the clock is back within the bound; claiming again", args...)
	case c.skew.Abs() > c.bound/2:
		c.logger.Warn("litequeue: clock skew: the clock reads far from the server's", args...)
	case first:
		c.logger.Info("litequeue: clock skew against the server", args...)
	default:
		c.logger.Debug("litequeue: clock skew against the server", args...)
	}
}
