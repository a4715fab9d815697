package litequeue_test

import (
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{1500 * time.Millisecond, "1.5s"},
		{time.Minute, "1m"},
		{90 * time.Second, "1m30s"},
		{2 * time.Hour, "2h"},
		{2*time.Hour + 5*time.Minute, "2h5m"},
		{24 * time.Hour, "1d"},
		{14 * 24 * time.Hour, "14d"},
		{36 * time.Hour, "1d12h"},
		{36*time.Hour + time.Second, "1d12h0m1s"},
	} {
		if got := litequeue.FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
		back, err := litequeue.ParseDuration(tc.want)
		if err != nil || back != tc.d {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.want, back, err, tc.d)
		}
	}
}
