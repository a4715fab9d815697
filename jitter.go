package litequeue

import (
	"math"
	"time"
)

// Jitter names how a retry's wait is spread below its ceiling d, so that
// jobs that failed together do not all come back at the same instant. The
// empty Jitter means unset: [FullJitter] in the default policy, inherited
// from [Options.Retry] in a named one.
type Jitter string

// The jitter kinds, for a ceiling d and a uniform draw u in [0,1):
const (
	FullJitter  Jitter = "full"  // u·d: anywhere in [0, d]
	EqualJitter Jitter = "equal" // d/2 + u·d/2: in [d/2, d]
	NoJitter    Jitter = "none"  // d itself
)

// apply spreads d by the jitter kind using the draw u. It is a pure function
// of its arguments: the only randomness is u. A u that is NaN, negative or
// not below 1 is clamped into [0,1). An unset Jitter counts as FullJitter.
// The result lies in [0, d] for any d ≥ 0.
func (j Jitter) apply(d time.Duration, u float64) time.Duration {
	if d <= 0 {
		return 0
	}
	u = clampUnit(u)
	switch j {
	case NoJitter:
		return d
	case EqualJitter:
		half := d / 2
		return half + scale(d-half, u)
	default:
		return scale(d, u)
	}
}

// clampUnit maps u into [0,1); NaN becomes 0.
func clampUnit(u float64) float64 {
	switch {
	case !(u > 0): // also NaN
		return 0
	case u >= 1:
		return math.Nextafter(1, 0)
	}
	return u
}

// scale returns u·d for u in [0,1), never more than d: float64 has fewer
// bits than a large Duration, so the product is checked rather than trusted.
func scale(d time.Duration, u float64) time.Duration {
	f := float64(d) * u
	if f >= float64(d) {
		return d
	}
	return time.Duration(f)
}
