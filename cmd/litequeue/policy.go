package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/litequeue/litequeue"
)

// policyJSON is the output of "policy --json". Durations are in
// milliseconds. Source says where the policy comes from: "config" (the
// file Config), "recorded" (by the app's worker at RecordedAtMS, on Host
// with PID, which also recorded Kinds) or "defaults" (the library's, as
// Why says).
type policyJSON struct {
	Source       string            `json:"source"`
	Config       string            `json:"config,omitempty"`
	RecordedAtMS int64             `json:"recorded_at_ms,omitempty"`
	Host         string            `json:"host,omitempty"`
	PID          int               `json:"pid,omitempty"`
	Why          string            `json:"why,omitempty"`
	Kinds        []kindJSON        `json:"kinds,omitempty"`
	Name         string            `json:"name"`
	Backoff      litequeue.Backoff `json:"backoff"`
	BaseMS       int64             `json:"base_ms"`
	CeilingMS    int64             `json:"ceiling_ms"`
	MaxTries     int               `json:"max_tries"`
	Jitter       litequeue.Jitter  `json:"jitter"`
	Schedule     []stepJSON        `json:"schedule"`
	TotalMS      int64             `json:"total_ms"`
}

// stepJSON is one retry of a policy's schedule.
type stepJSON struct {
	Retry     int   `json:"retry"`
	MaxWaitMS int64 `json:"max_wait_ms"`
	TotalMS   int64 `json:"total_ms"`
}

// policy defines the flags of "policy" and returns the command.
func (c *cli) policy(fs *flagSet) runFunc {
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, args []string) error {
		shown, err := c.shownPolicies(ctx)
		if err != nil {
			return err
		}
		name, p, err := shown.lookup(c, args)
		if err != nil {
			return err
		}
		var kinds []litequeue.RecordedPolicy
		if len(args) == 0 {
			kinds = shown.kinds // with the default policy, the kinds
		}
		steps := p.Schedule()
		if *asJSON {
			return writeJSON(c.stdout, shown.toJSON(c, name, kinds, toPolicyJSON(name, p, steps)))
		}
		fmt.Fprintf(c.stdout, "policy %s: %s\n%s\n\n", name, describePolicy(p), shown.describe(c, name))
		tw := newTable(c.stdout)
		fmt.Fprintln(tw, "RETRY\tMAX WAIT\tWORST CASE TOTAL")
		for _, s := range steps {
			fmt.Fprintf(tw, "%d\t%s\t%s\n", s.Retry, litequeue.FormatDuration(s.MaxWait), litequeue.FormatDuration(s.Total))
		}
		fmt.Fprintf(tw, "total\t\t%s\n", litequeue.FormatDuration(scheduleTotal(steps)))
		tw.Flush()
		fmt.Fprintf(c.stdout, "\n%s\n", jitterNote(p))
		if len(kinds) > 0 {
			c.writeKinds(kinds)
		}
		return nil
	}
}

// scheduleTotal is the worst-case wait of a whole schedule.
func scheduleTotal(steps []litequeue.ScheduleStep) time.Duration {
	if len(steps) == 0 {
		return 0
	}
	return steps[len(steps)-1].Total
}

// toPolicyJSON returns the JSON form of the policy p, named name, and its
// schedule.
func toPolicyJSON(name string, p litequeue.Policy, steps []litequeue.ScheduleStep) policyJSON {
	out := policyJSON{
		Name: name, Backoff: p.Backoff, BaseMS: p.Base.Milliseconds(), CeilingMS: p.Ceiling.Milliseconds(),
		MaxTries: p.MaxTries, Jitter: p.Jitter, Schedule: make([]stepJSON, len(steps)), TotalMS: scheduleTotal(steps).Milliseconds(),
	}
	for i, s := range steps {
		out.Schedule[i] = stepJSON{s.Retry, s.MaxWait.Milliseconds(), s.Total.Milliseconds()}
	}
	return out
}

// lookup returns the policy that the optional NAME argument names: a
// named policy, or the default policy for none or "default".
func (s *shownPolicies) lookup(c *cli, pos []string) (string, litequeue.Policy, error) {
	name := "default"
	if len(pos) > 0 {
		name = pos[0]
	}
	if p, ok := s.policies[name]; ok {
		return name, p, nil
	}
	names := slices.Sorted(maps.Keys(s.policies))
	names = slices.DeleteFunc(names, func(n string) bool { return n == "default" })
	return "", litequeue.Policy{}, usageErrorf("unknown policy %q (%s)", name, s.known(c, append([]string{"default"}, names...)))
}

// toJSON adds to out, the JSON form of the policy named name, where it
// comes from, and the recorded kinds.
func (s *shownPolicies) toJSON(c *cli, name string, kinds []litequeue.RecordedPolicy, out policyJSON) policyJSON {
	out.Source = s.source
	switch s.source {
	case fromConfig:
		out.Config = c.config
	case fromRecorded:
		r := s.recorded[name]
		out.RecordedAtMS, out.Host, out.PID = r.RecordedAt.UnixMilli(), r.Host, r.PID
	default:
		out.Why = s.why
	}
	for _, k := range kinds {
		out.Kinds = append(out.Kinds, toKindJSON(k))
	}
	return out
}

// describePolicy says a policy in one line.
func describePolicy(p litequeue.Policy) string {
	return fmt.Sprintf("%s from %v, capped at %v, %s, %s",
		p.Backoff, litequeue.FormatDuration(p.Base), litequeue.FormatDuration(p.Ceiling), tries(p.MaxTries), jitterName(p.Jitter))
}

// jitterName names a jitter kind in a sentence: "full jitter", "no jitter".
func jitterName(j litequeue.Jitter) string {
	if j == litequeue.NoJitter {
		return "no jitter"
	}
	return string(j) + " jitter"
}

// jitterNote says how the actual waits relate to the schedule's maximums.
func jitterNote(p litequeue.Policy) string {
	var how string
	switch p.Jitter {
	case litequeue.FullJitter:
		how = "Full jitter draws each actual wait uniformly between 0 and its max wait."
	case litequeue.EqualJitter:
		how = "Equal jitter draws each actual wait uniformly between half its max wait and all of it."
	default:
		how = "Without jitter each wait is exactly its max wait: jobs that fail together retry together."
	}
	return fmt.Sprintf("%s A job is dead when try %d fails.", how, p.MaxTries)
}

// tries returns "1 try" or "8 tries".
func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

// defaultPolicy is the policy without --config.
func defaultPolicy() litequeue.Policy { return litequeue.DefaultPolicy() }
