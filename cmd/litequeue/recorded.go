package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// The sources of the policies that "policy" shows.
const (
	fromConfig   = "config"   // --config
	fromRecorded = "recorded" // the app's workers, in the database
	fromDefaults = "defaults" // the library's: nothing else to show
)

// shownPolicies are the retry policies that "policy" shows, and where
// they come from: with --config, the config's; else those that the app's
// workers recorded in the database (see Queue.RecordedPolicies); else,
// with nothing recorded, the library's defaults, saying so.
type shownPolicies struct {
	source   string
	why      string                              // of the defaults: why they are shown
	policies map[string]litequeue.Policy         // by name, the default as "default"
	recorded map[string]litequeue.RecordedPolicy // of a recorded source, by the same names
	kinds    []litequeue.RecordedPolicy          // of a recorded source, by name
}

// shownPolicies reads the policies that "policy" shows.
func (c *cli) shownPolicies(ctx context.Context) (*shownPolicies, error) {
	if c.config != "" {
		policies, err := c.policies()
		return &shownPolicies{source: fromConfig, policies: policies}, err
	}
	s := &shownPolicies{source: fromDefaults, policies: map[string]litequeue.Policy{"default": litequeue.DefaultPolicy()}}
	if db := c.dbPath(); !isServerURL(db) {
		if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
			s.why = fmt.Sprintf("no database at %s to read the app's from", db)
			return s, nil
		}
	}
	var recorded []litequeue.RecordedPolicy
	err := c.read(func(q *litequeue.Queue) (err error) {
		recorded, err = q.RecordedPolicies(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(recorded) == 0 {
		s.why = fmt.Sprintf("no app has recorded its policies in %s (its workers record them as they start)", c.dbName())
		return s, nil
	}
	s.source, s.recorded = fromRecorded, map[string]litequeue.RecordedPolicy{}
	for _, r := range recorded {
		name := r.Name
		switch r.Scope {
		case "default":
			name = "default"
		case "kind":
			s.kinds = append(s.kinds, r)
			continue
		}
		s.policies[name], s.recorded[name] = r.Policy, r
	}
	return s, nil
}

// describe says where the policy named name comes from, in a sentence.
func (s *shownPolicies) describe(c *cli, name string) string {
	switch s.source {
	case fromConfig:
		return "from the config " + c.config
	case fromRecorded:
		return "recorded by the app " + recordedBy(s.recorded[name])
	}
	return "the library's defaults, not recorded by any app: " + s.why
}

// recordedBy says who recorded r and when.
func recordedBy(r litequeue.RecordedPolicy) string {
	return fmt.Sprintf("at %s (host %s, pid %d)", fmtTimeMS(r.RecordedAt), r.Host, r.PID)
}

// known names the policies there are, for the error of an unknown one.
func (s *shownPolicies) known(c *cli, names []string) string {
	switch s.source {
	case fromConfig:
		return c.config + " has " + strings.Join(names, ", ")
	case fromRecorded:
		return "the app recorded " + strings.Join(names, ", ")
	}
	return "no --config given and none recorded, so only the default policy"
}

// kindJSON is a kind the app's workers recorded, in "policy --json".
// Durations are in milliseconds; 0: none.
type kindJSON struct {
	Kind          string `json:"kind"`
	Policy        string `json:"policy"` // "default" or the named policy's name
	TimeoutMS     int64  `json:"timeout_ms"`
	MaxRunning    int    `json:"max_running"`
	RateLimit     int    `json:"rate_limit"`
	RatePerMS     int64  `json:"rate_per_ms"`
	ExpireAfterMS int64  `json:"expire_after_ms"`
	Breaker       string `json:"breaker"` // as the text says it; "": none
	RecordedAtMS  int64  `json:"recorded_at_ms"`
	Host          string `json:"host"`
	PID           int    `json:"pid"`
}

// toKindJSON returns the JSON form of a recorded kind.
func toKindJSON(r litequeue.RecordedPolicy) kindJSON {
	k := r.Kind
	return kindJSON{Kind: r.Name, Policy: usesPolicy(r), TimeoutMS: r.Timeout.Milliseconds(), MaxRunning: k.MaxRunning,
		RateLimit: k.RateLimit, RatePerMS: k.RatePer.Milliseconds(), ExpireAfterMS: k.ExpireAfter.Milliseconds(),
		Breaker: breakerText(k.Breaker), RecordedAtMS: r.RecordedAt.UnixMilli(), Host: r.Host, PID: r.PID}
}

// usesPolicy names the policy a recorded kind uses.
func usesPolicy(r litequeue.RecordedPolicy) string {
	if r.UsesPolicy == "" {
		return "default"
	}
	return r.UsesPolicy
}

// writeKinds writes the table of the recorded kinds.
func (c *cli) writeKinds(kinds []litequeue.RecordedPolicy) {
	fmt.Fprintln(c.stdout, "\nkinds, as the app's workers recorded them:")
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "KIND\tPOLICY\tTIMEOUT\tFLOW CONTROL\tRECORDED")
	for _, r := range kinds {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, usesPolicy(r), orDash(optDuration(r.Timeout)),
			orDash(r.Kind.String()), recordedBy(r))
	}
	tw.Flush()
}

// optDuration shows d, or "" for none.
func optDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return litequeue.FormatDuration(d)
}

// breakerText says a breaker in a few words; "" for none.
func breakerText(b *litequeue.Breaker) string {
	if b == nil {
		return ""
	}
	return b.String()
}
