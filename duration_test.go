package litequeue_test

import (
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

func TestFormatDuration_Syntax(t *testing.T) {
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

func TestParseDuration_Syntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90s", 90 * time.Second, true},
		{"1h30m", 90 * time.Minute, true},
		{"14d", 14 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"1.5d", 36 * time.Hour, true},
		{"0", 0, true},
		{"", 0, false},
		{"d", 0, false},
		{"-1s", 0, false},
		{"1d-1h", 0, false},
		{"5", 0, false},
		{"1w", 0, false},
		{"1h1", 0, false},
		{"106751d", 106751 * 24 * time.Hour, true},
		{"106752d", 0, false},
		{"9999999999999999999ns", 0, false},
	}
	for _, tt := range tests {
		got, err := litequeue.ParseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
