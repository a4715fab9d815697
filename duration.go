package litequeue

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// ParseDuration parses a duration as litequeue.toml writes them: Go syntax
// ("1h30m", "2s", "500ms"), where d, for days of 24 hours, may come first
// ("14d", "1d12h", "1.5d"). It refuses negative durations, and durations
// over the longest a [time.Duration] holds (about 106,751 days).
func ParseDuration(s string) (time.Duration, error) {
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	d, err := parseDuration(s)
	switch {
	case errors.Is(err, errTooLong):
		return 0, fmt.Errorf("duration %q is over the longest, %dd", s, math.MaxInt64/int64(24*time.Hour))
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration such as \"90s\", \"1h30m\" or \"14d\"", s)
	}
	return d, nil
}

// The errors of parseDuration, which ParseDuration words.
var (
	errSyntax  = errors.New("not a duration")
	errTooLong = errors.New("duration too long")
)

// parseDuration parses s, which has no sign, or returns errSyntax or
// errTooLong.
func parseDuration(s string) (time.Duration, error) {
	var d time.Duration
	if days, rest, found := strings.Cut(s, "d"); found {
		if days == "" || strings.Trim(days, "0123456789.") != "" {
			return 0, errSyntax
		}
		h, err := goDuration(days + "h")
		switch {
		case err != nil:
			return 0, err
		case h > math.MaxInt64/24:
			return 0, errTooLong
		}
		d, s = 24*h, rest
		if s == "" {
			return d, nil
		}
	}
	// What follows the days is Go syntax without a sign.
	if s == "" || strings.IndexByte("0123456789.", s[0]) < 0 {
		return 0, errSyntax
	}
	r, err := goDuration(s)
	switch {
	case err != nil:
		return 0, err
	case r > math.MaxInt64-d:
		return 0, errTooLong
	}
	return d + r, nil
}

// goDuration is time.ParseDuration, with its errors told apart: errTooLong
// for s in Go's syntax, errSyntax for anything else.
func goDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err == nil:
		return d, nil
	case wellFormed(s):
		return 0, errTooLong
	}
	return 0, errSyntax
}

// wellFormed reports whether s is in Go's duration syntax, whatever its
// numbers: time.ParseDuration refuses it only because it is too long. It
// tries s with every run of digits made 1.
func wellFormed(s string) bool {
	var b strings.Builder
	digits := false
	for _, r := range s {
		isDigit := r >= '0' && r <= '9'
		if !isDigit {
			b.WriteRune(r)
		} else if !digits {
			b.WriteByte('1')
		}
		digits = isDigit
	}
	_, err := time.ParseDuration(b.String())
	return err == nil
}

// FormatDuration writes d as [ParseDuration] reads it, without trailing zero
// units: "1m", not "1m0s"; "14d", not "336h0m0s"; "1d12h". For every d of
// whole milliseconds and at least 0, ParseDuration(FormatDuration(d)) is d.
func FormatDuration(d time.Duration) string {
	const day = 24 * time.Hour
	if d >= day {
		days := fmt.Sprintf("%dd", d/day)
		if d%day == 0 {
			return days
		}
		return days + FormatDuration(d%day)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// FormatAge writes a measured duration — an age, a wait, a lag — rounded
// to what a person reads, as the litequeue command and the dashboard show
// one: milliseconds under a second ("870ms"), tenths of a second under a
// minute ("23.9s"), whole seconds above, as [FormatDuration] writes them
// ("15m24s", "1d2h"); "0s" for 0 or less.
func FormatAge(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return FormatDuration(d.Round(time.Second))
}
