package litequeue

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// ParseDuration parses a duration as litequeue.toml writes them: Go syntax
// ("1h30m", "2s", "500ms"), where d, for days of 24 hours, may come first
// ("14d", "1d12h", "1.5d"). It refuses negative durations.
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration such as \"90s\", \"1h30m\" or \"14d\"", s)
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	var d time.Duration
	if days, rest, found := strings.Cut(s, "d"); found {
		if days == "" || strings.Trim(days, "0123456789.") != "" {
			return 0, bad
		}
		h, err := time.ParseDuration(days + "h")
		if err != nil || h > math.MaxInt64/24 {
			return 0, bad
		}
		d, s = 24*h, rest
		if s == "" {
			return d, nil
		}
	}
	// What follows the days is Go syntax without a sign.
	if s == "" || strings.IndexByte("0123456789.", s[0]) < 0 {
		return 0, bad
	}
	r, err := time.ParseDuration(s)
	if err != nil || r > math.MaxInt64-d {
		return 0, bad
	}
	return d + r, nil
}
