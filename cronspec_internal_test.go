package litequeue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustSpec(t *testing.T, spec string, loc *time.Location) *cronSpec {
	t.Helper()
	c, err := parseSpec(spec, loc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// slotsOn returns the slots of c from local midnight of the date to the
// next local midnight, excluded.
func slotsOn(c *cronSpec, date string) []time.Time {
	day, err := time.ParseInLocation(time.DateOnly, date, c.loc)
	if err != nil {
		panic(err)
	}
	end := day.AddDate(0, 0, 1)
	var slots []time.Time
	for s := c.next(day.Add(-time.Nanosecond)); s.Before(end); s = c.next(s) {
		slots = append(slots, s)
	}
	return slots
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestCronSpec_DST checks cron(8)'s rules on the days the clocks change:
// wildcard hours follow real time, a fixed time in the skipped hour runs
// once at the end of the gap, one in the repeated hour once, the first
// time.
func TestCronSpec_DST(t *testing.T) {
	t.Parallel()
	tests := []struct {
		loc, date, spec string
		count           int         // slots that day
		want            []time.Time // the slots, if given
	}{
		// Europe/Berlin: 02:00 CET → 03:00 CEST; 03:00 CEST → 02:00 CET.
		{"Europe/Berlin", "2026-03-29", "*/15 * * * *", 92, nil},
		{"Europe/Berlin", "2026-03-29", "0 * * * *", 23, nil},
		{"Europe/Berlin", "2026-03-29", "30 2 * * *", 1, []time.Time{utc("2026-03-29T01:00:00Z")}}, // 03:00 CEST
		{"Europe/Berlin", "2026-03-29", "0,30 2 * * *", 1, []time.Time{utc("2026-03-29T01:00:00Z")}},
		{"Europe/Berlin", "2026-03-29", "0 3 * * *", 1, []time.Time{utc("2026-03-29T01:00:00Z")}},
		{"Europe/Berlin", "2026-03-29", "30 1,3 * * *", 2, []time.Time{utc("2026-03-29T00:30:00Z"), utc("2026-03-29T01:30:00Z")}},
		{"Europe/Berlin", "2026-10-25", "*/15 * * * *", 100, nil},
		{"Europe/Berlin", "2026-10-25", "0 * * * *", 25, nil},
		{"Europe/Berlin", "2026-10-25", "30 2 * * *", 1, []time.Time{utc("2026-10-25T00:30:00Z")}}, // 02:30 CEST
		{"Europe/Berlin", "2026-10-25", "0,30 2 * * *", 2, []time.Time{utc("2026-10-25T00:00:00Z"), utc("2026-10-25T00:30:00Z")}},
		{"Europe/Berlin", "2026-10-25", "0 3 * * *", 1, []time.Time{utc("2026-10-25T02:00:00Z")}},
		{"Europe/Berlin", "2026-10-25", "@daily", 1, []time.Time{utc("2026-10-24T22:00:00Z")}},
		// America/New_York: 02:00 EST → 03:00 EDT; 02:00 EDT → 01:00 EST.
		{"America/New_York", "2026-03-08", "*/15 * * * *", 92, nil},
		{"America/New_York", "2026-03-08", "0 * * * *", 23, nil},
		{"America/New_York", "2026-03-08", "30 2 * * *", 1, []time.Time{utc("2026-03-08T07:00:00Z")}}, // 03:00 EDT
		{"America/New_York", "2026-11-01", "*/15 * * * *", 100, nil},
		{"America/New_York", "2026-11-01", "0 * * * *", 25, nil},
		{"America/New_York", "2026-11-01", "30 1 * * *", 1, []time.Time{utc("2026-11-01T05:30:00Z")}}, // 01:30 EDT
		{"America/New_York", "2026-11-01", "30 2 * * *", 1, []time.Time{utc("2026-11-01T07:30:00Z")}}, // once: 02:30 EST
		// An ordinary day, for comparison.
		{"Europe/Berlin", "2026-03-28", "*/15 * * * *", 96, nil},
		{"Europe/Berlin", "2026-03-28", "30 2 * * *", 1, []time.Time{utc("2026-03-28T01:30:00Z")}},
	}
	for _, tt := range tests {
		t.Run(tt.loc+"/"+tt.date+"/"+tt.spec, func(t *testing.T) {
			t.Parallel()
			c := mustSpec(t, tt.spec, mustLoad(t, tt.loc))
			got := slotsOn(c, tt.date)
			if len(got) != tt.count {
				t.Fatalf("%d slots, want %d: %v", len(got), tt.count, got)
			}
			for i := 1; i < len(got); i++ {
				if !got[i].After(got[i-1]) {
					t.Fatalf("slot %d, %v, is not after slot %d, %v", i, got[i], i-1, got[i-1])
				}
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
					t.Errorf("slots (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestCronSpec_NextPrev checks, on both DST days and around them, that
// next is strictly after its argument, that prev is at or before it, and
// that they agree: no slot lies between prev(t) and next(t).
func TestCronSpec_NextPrev(t *testing.T) {
	t.Parallel()
	specs := []string{"*/15 * * * *", "0 * * * *", "30 2 * * *", "0,30 1,2 * * *", "@daily", "@every 90s", "0 9 * * MON-FRI"}
	for _, loc := range []string{"UTC", "Europe/Berlin", "America/New_York"} {
		for _, spec := range specs {
			c := mustSpec(t, spec, mustLoad(t, loc))
			for _, from := range []time.Time{utc("2026-03-07T00:00:00Z"), utc("2026-10-24T00:00:00Z")} {
				for x := from; x.Before(from.Add(4 * 24 * time.Hour)); x = x.Add(7*time.Minute + 13*time.Second) {
					n, p := c.next(x), c.prev(x)
					if !n.After(x) {
						t.Fatalf("%s in %s: next(%v) = %v, not after it", spec, loc, x, n)
					}
					if p.After(x) || p.IsZero() {
						t.Fatalf("%s in %s: prev(%v) = %v, after it", spec, loc, x, p)
					}
					if got := c.next(p); !got.Equal(n) && !got.Equal(p) && got.Before(n) && got.After(x) {
						t.Fatalf("%s in %s: a slot %v lies between %v and %v", spec, loc, got, p, n)
					}
					if got := c.next(p); got.After(x) && !got.Equal(n) {
						t.Fatalf("%s in %s: next(prev(%v)) = %v, want next = %v", spec, loc, x, got, n)
					}
					if got := c.prev(n); !got.Equal(n) {
						t.Fatalf("%s in %s: prev(next(%v)) = %v, want %v", spec, loc, x, got, n)
					}
				}
			}
		}
	}
}

// TestCronSpec_Every checks that @every's slots are multiples of its
// interval since the Unix epoch, whatever the time it is asked at.
func TestCronSpec_Every(t *testing.T) {
	t.Parallel()
	c := mustSpec(t, "@every 90s", time.UTC)
	for _, x := range []time.Time{time.Unix(0, 0), utc("2026-01-01T12:00:00Z"), utc("2026-01-01T12:00:00Z").Add(123456789), time.Unix(-100, 0)} {
		n := c.next(x)
		if n.UnixMilli()%90000 != 0 || !n.After(x) || n.Sub(x) > 90*time.Second {
			t.Errorf("next(%v) = %v: want the first multiple of 90s after it", x, n)
		}
	}
	if got, want := c.next(time.Unix(0, 0)), time.Unix(90, 0); !got.Equal(want) {
		t.Errorf("next(epoch) = %v, want %v", got, want)
	}
	if got, want := c.prev(time.Unix(-1, 0)), time.Unix(-90, 0); !got.Equal(want) {
		t.Errorf("prev(-1s) = %v, want %v", got, want)
	}
}

// TestCronSpec_DailyIn checks that @daily is midnight of its location.
func TestCronSpec_DailyIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		loc  string
		want time.Time
	}{
		{"UTC", utc("2026-01-02T00:00:00Z")},
		{"Europe/Berlin", utc("2026-01-01T23:00:00Z")},
		{"America/New_York", utc("2026-01-02T05:00:00Z")},
		{"Asia/Kolkata", utc("2026-01-01T18:30:00Z")},
	}
	for _, tt := range tests {
		c := mustSpec(t, "@daily", mustLoad(t, tt.loc))
		if got := c.next(utc("2026-01-01T12:00:00Z")); !got.Equal(tt.want) {
			t.Errorf("@daily in %s: next = %v, want %v", tt.loc, got.UTC(), tt.want)
		}
	}
}

// TestCronSpec_SundaySeven checks that 7 in the day-of-week field is
// Sunday, as cron(8) has it: alone, in a list, in a range and in a range
// with a step. 2026-01-01 is a Thursday, 2026-01-04 a Sunday.
func TestCronSpec_SundaySeven(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec string
		want []string // the first slots after 2026-01-01T12:00Z
	}{
		{"0 0 * * 7", []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-18T00:00:00Z"}},
		{"30 6 * * 5-7", []string{"2026-01-02T06:30:00Z", "2026-01-03T06:30:00Z", "2026-01-04T06:30:00Z", "2026-01-09T06:30:00Z"}},
		{"0 0 * * 1,7", []string{"2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"0 0 * * 1-7/3", []string{"2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-08T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"0 0 * * 0-7", []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z"}},
		{"0 0 1 * 7", []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z", "2026-01-18T00:00:00Z", "2026-01-25T00:00:00Z", "2026-02-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		c, err := parseSpec(tt.spec, time.UTC)
		if err != nil {
			t.Errorf("parseSpec(%q): %v", tt.spec, err)
			continue
		}
		var got []string
		for s := utc("2026-01-01T12:00:00Z"); len(got) < len(tt.want); {
			s = c.next(s)
			got = append(got, s.UTC().Format(time.RFC3339))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("slots of %q (-want +got):\n%s", tt.spec, diff)
		}
	}
	for _, spec := range []string{"0 0 * * 8", "0 0 * * 6-8", "0 0 * * 7-1", "0 0 * * 7/0"} {
		if _, err := parseSpec(spec, time.UTC); err == nil {
			t.Errorf("parseSpec(%q): no error, want one", spec)
		}
	}
}
