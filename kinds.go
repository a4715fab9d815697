package litequeue

import (
	"fmt"
	"strings"
	"time"
)

// KindOptions are the flow control of one kind, as [Options.Kinds] holds it
// and a [kinds.NAME] table of litequeue.toml writes it: the
// [HandlerOption] values [MaxRunning], [RateLimit], [WithExpiry] and
// [WithBreaker], set without a rebuild. [Queue.Handle] starts the kind's
// handler from them, and its own HandlerOptions win, field by field. A
// zero field sets nothing. As with the HandlerOptions, limits and breakers
// are honoured by the processes that declare them: give every process on
// the database the same file.
//
// [Open] and [LoadConfig] refuse what Handle would panic on given the same
// [HandlerOption], with an error that names the kind and wraps a
// *[FieldError] whose [FieldError.Field] is the key of litequeue.toml:
// "max_running", "rate_limit", "rate_per" or "expire_after", or, in
// "kinds.NAME.breaker", "failures", "ratio", "window", "cooldown" or
// "max_cooldown".
type KindOptions struct {
	// MaxRunning is [MaxRunning]'s n: at most this many runs of the kind
	// at once. 0: no limit.
	MaxRunning int

	// RateLimit and RatePer are [RateLimit]'s n and per: at most RateLimit
	// starts in any window of RatePer. 0 for both: no limit; set one, set
	// both.
	RateLimit int
	RatePer   time.Duration

	// ExpireAfter is [WithExpiry]'s d. Unlike WithExpiry, it also gives
	// its expiry to the jobs of the kind that the [Queue] enqueues before or
	// without a handler of the kind, so that a process that only enqueues
	// follows the file too. [ExpireAfter] wins over it. 0: no expiry.
	ExpireAfter time.Duration

	// Breaker is [WithBreaker]'s Breaker; its zero fields take the
	// defaults. nil: no breaker.
	Breaker *Breaker
}

// options returns the HandlerOptions that k stands for.
func (k KindOptions) options() []HandlerOption {
	var opts []HandlerOption
	if k.MaxRunning != 0 {
		opts = append(opts, MaxRunning(k.MaxRunning))
	}
	if k.RateLimit != 0 || k.RatePer != 0 {
		opts = append(opts, RateLimit(k.RateLimit, k.RatePer))
	}
	if k.ExpireAfter != 0 {
		opts = append(opts, WithExpiry(k.ExpireAfter))
	}
	if k.Breaker != nil {
		opts = append(opts, WithBreaker(*k.Breaker))
	}
	return opts
}

// resolve checks k with the checks Handle makes of the HandlerOptions it
// stands for, and returns it with its Breaker filled in.
func (k KindOptions) resolve() (KindOptions, *kindError) {
	if err := k.checkRate(); err != nil {
		return k, &kindError{Err: err}
	}
	var h handler
	for _, opt := range k.options() {
		opt(&h)
	}
	if err := h.resolve(); err != nil {
		return k, err
	}
	k.Breaker = h.breaker
	return k, nil
}

// checkRate refuses one of RateLimit and RatePer set without the other:
// RateLimit stands for both, and the one left out was not meant as 0.
func (k KindOptions) checkRate() *FieldError {
	switch {
	case k.RateLimit != 0 && k.RatePer == 0:
		return &FieldError{Field: "rate_limit", Value: k.RateLimit, Limit: "rate_per", kind: unpaired}
	case k.RatePer != 0 && k.RateLimit == 0:
		return &FieldError{Field: "rate_per", Value: k.RatePer, Limit: "rate_limit", kind: unpaired}
	}
	return nil
}

// String says k in a few words, as the litequeue command and the
// dashboard show a kind's flow control: "at most 4 running, 10 starts
// per 1m, expires after 1h, breaker at 20 failures in 1m (50% of runs),
// open 30s to 10m"; "" for none.
func (k KindOptions) String() string {
	var parts []string
	if k.MaxRunning > 0 {
		parts = append(parts, fmt.Sprintf("at most %d running", k.MaxRunning))
	}
	if k.RateLimit > 0 {
		parts = append(parts, fmt.Sprintf("%d starts per %s", k.RateLimit, FormatDuration(k.RatePer)))
	}
	if k.ExpireAfter > 0 {
		parts = append(parts, "expires after "+FormatDuration(k.ExpireAfter))
	}
	if k.Breaker != nil {
		parts = append(parts, k.Breaker.String())
	}
	return strings.Join(parts, ", ")
}
