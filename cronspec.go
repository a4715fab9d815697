package litequeue

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// A periodic schedule's slots: the instants its jobs are due, a pure
// function of the spec and the location, so that every process computes
// the same ones. See "Periodic jobs" in doc.go for the rules.

// cronParser reads standard 5-field specs and the descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// MinPeriodicEvery is the shortest interval "@every" takes.
const MinPeriodicEvery = time.Second

// cronSpec is a parsed schedule.
type cronSpec struct {
	every time.Duration      // "@every": slots are its multiples since the Unix epoch; else 0
	sched *cron.SpecSchedule // a 5-field spec or a descriptor
	loc   *time.Location     // where sched's fields are read
	fixed bool               // neither minute nor hour is a wildcard: cron(8)'s DST rules apply
}

// parseSpec parses spec for the location loc.
func parseSpec(spec string, loc *time.Location) (*cronSpec, error) {
	spec = strings.TrimSpace(spec)
	if loc == nil {
		return nil, errors.New("nil location")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, fmt.Errorf("spec %q: give the location with PeriodicIn, not in the spec", spec)
	}
	if d, ok := strings.CutPrefix(spec, "@every "); ok {
		every, err := time.ParseDuration(strings.TrimSpace(d))
		switch {
		case err != nil:
			return nil, fmt.Errorf("spec %q: %w", spec, err)
		case every < MinPeriodicEvery:
			return nil, fmt.Errorf("spec %q: interval %v is below the minimum of %v", spec, every, MinPeriodicEvery)
		case every%time.Millisecond != 0:
			return nil, fmt.Errorf("spec %q: interval %v is not a whole number of milliseconds", spec, every)
		}
		return &cronSpec{every: every, loc: loc}, nil
	}
	s, err := cronParser.Parse(sundaySeven(spec))
	if err != nil {
		return nil, fmt.Errorf("spec %q: %w", spec, err)
	}
	sched := s.(*cron.SpecSchedule) // every other kind was handled above
	sched.Location = loc
	return &cronSpec{sched: sched, loc: loc, fixed: isFixed(spec)}, nil
}

// sundaySeven returns spec with the 7s of its day-of-week field, which
// cron(8) reads as Sunday and the parser refuses, written as 0: a part of
// the field that ends at 7 ("7", "5-7", "1-7/3") becomes the list of its
// days ("0", "5,6,0", "1,4,0"). Other specs and parts are left to the
// parser.
func sundaySeven(spec string) string {
	f := strings.Fields(spec)
	if len(f) != 5 {
		return spec
	}
	parts := strings.Split(f[4], ",")
	for i, p := range parts {
		parts[i] = sundayPart(p)
	}
	f[4] = strings.Join(parts, ",")
	return strings.Join(f, " ")
}

// sundayPart is sundaySeven for one part of the day-of-week field: a day,
// or a range of days with a step or without.
func sundayPart(p string) string {
	span, step, stepped := strings.Cut(p, "/")
	first, last, ranged := strings.Cut(span, "-")
	if !ranged {
		last = first
	}
	lo, err1 := strconv.Atoi(first)
	hi, err2 := strconv.Atoi(last)
	by, err3 := 1, error(nil)
	if stepped {
		by, err3 = strconv.Atoi(step)
	}
	if err1 != nil || err2 != nil || err3 != nil || hi != 7 || lo < 0 || lo > hi || by < 1 {
		return p
	}
	var days []string
	for d := lo; d <= hi; d += by {
		days = append(days, strconv.Itoa(d%7))
	}
	return strings.Join(days, ",")
}

// isFixed reports whether a parsed spec runs at fixed times of day: as
// cron(8) has it, neither its minute nor its hour field begins with a
// wildcard ("*", "*/15"), and it is not @hourly.
func isFixed(spec string) bool {
	if strings.HasPrefix(spec, "@") {
		return spec != "@hourly"
	}
	f := strings.Fields(spec)
	wild := func(s string) bool { return strings.HasPrefix(s, "*") || strings.HasPrefix(s, "?") }
	return !wild(f[0]) && !wild(f[1])
}

// next returns the schedule's first slot strictly after t, or the zero
// time if there is none within five years.
func (c *cronSpec) next(t time.Time) time.Time {
	if c.every > 0 {
		return c.prev(t).Add(c.every)
	}
	t = t.In(c.loc)
	n := c.sched.Next(t)
	if !c.fixed {
		return n // wall times that match, as the clock shows them: real time
	}
	for !n.IsZero() && repeated(n) {
		n = c.sched.Next(n) // the second time a wall time is shown
	}
	if g := c.gapSlot(t, n); !g.IsZero() {
		return g
	}
	return n
}

// prev returns the schedule's latest slot at or before t, or the zero time
// if there is none within about eight years.
func (c *cronSpec) prev(t time.Time) time.Time {
	if c.every > 0 {
		ms, every := t.UnixMilli(), c.every.Milliseconds()
		slot := ms / every * every
		if slot > ms { // a negative ms rounds up
			slot -= every
		}
		return time.UnixMilli(slot).In(c.loc)
	}
	for back := time.Minute; back < 1<<22*time.Minute; back *= 2 {
		s := c.next(t.Add(-back))
		if s.IsZero() || s.After(t) {
			continue
		}
		for {
			n := c.next(s)
			if n.IsZero() || n.After(t) {
				return s
			}
			s = n
		}
	}
	return time.Time{}
}

// repeated reports whether t's wall time was shown before, in the hour
// that the clock repeats when it falls back.
func repeated(t time.Time) bool {
	start, _ := t.ZoneBounds()
	if start.IsZero() {
		return false
	}
	_, before := start.Add(-time.Nanosecond).Zone()
	_, after := start.Zone()
	back := time.Duration(before-after) * time.Second
	return back > 0 && t.Sub(start) < back
}

// gapSlot returns the first clock change in (t, until] that skips a wall
// time the schedule matches: where cron(8) runs, once, a fixed-time job
// whose time does not exist that day. until zero: within five years.
func (c *cronSpec) gapSlot(t, until time.Time) time.Time {
	if until.IsZero() {
		until = t.AddDate(5, 0, 0)
	}
	for {
		_, end := t.ZoneBounds()
		if end.IsZero() || end.After(until) {
			return time.Time{}
		}
		_, before := end.Add(-time.Nanosecond).Zone()
		_, after := end.Zone()
		if skip := time.Duration(after-before) * time.Second; skip > 0 && c.matchesWall(end.In(time.FixedZone("", before)), skip) {
			return end
		}
		t = end
	}
}

// matchesWall reports whether a minute of the wall times [from, from+d)
// matches the schedule's fields; from is in a zone of the offset that the
// clock showed them with.
func (c *cronSpec) matchesWall(from time.Time, d time.Duration) bool {
	s := c.sched
	for m := time.Duration(0); m < d; m += time.Minute {
		w := from.Add(m)
		if s.Month&(1<<uint(w.Month())) != 0 && dayMatches(s, w) &&
			s.Hour&(1<<uint(w.Hour())) != 0 && s.Minute&(1<<uint(w.Minute())) != 0 {
			return true
		}
	}
	return false
}

// starBit marks a field of a cron.SpecSchedule given as "*" (or "?").
const starBit = 1 << 63

// dayMatches is cron's rule for the day fields: with either one a
// wildcard both must match, else either.
func dayMatches(s *cron.SpecSchedule, t time.Time) bool {
	dom := s.Dom&(1<<uint(t.Day())) != 0
	dow := s.Dow&(1<<uint(t.Weekday())) != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}
