package litequeue

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The policies recorded on the database: each Work and RunDue writes the
// retry policies of its Options — the default and the named ones — and
// what each kind it handles resolved to (its policy, timeout, limits,
// expiry and breaker), as rows of litequeue_policies, so that the
// dashboard and the litequeue command, which have no handlers, show what
// the workers use and who said so. They are written with the kinds
// handled (handled.go): at a worker's start, when a kind gains a handler,
// and at most once an hour after that, in the same transaction, each row
// only where its value changed. Not at Open: the litequeue command opens
// the database for writing too, with the library's defaults or its own
// --config, and would record those as the app's; and a process that only
// enqueues runs no policy.

// RecordedPolicy is a retry policy, or a kind's options, as a worker
// recorded it on the database (see [Queue.RecordedPolicies]).
type RecordedPolicy struct {
	// Scope is "default" (the worker's [Options.Retry]), "policy" (one of
	// its [Options.Policies]) or "kind" (a kind it handles).
	Scope string
	// Name is the named policy's, or the kind's, name; "" for the default.
	Name string
	// Policy is the retry policy, its zero fields filled in: of a kind,
	// the one its handler uses.
	Policy Policy
	// UsesPolicy is, of a kind, the name of the policy its handler uses
	// ([UsePolicy]); "": the default.
	UsesPolicy string
	// Timeout is, of a kind, its handler's [WithTimeout]; 0: none.
	Timeout time.Duration
	// Kind is, of a kind, its flow control as its handler resolved it:
	// [Options.Kinds] and the [HandlerOption] values [MaxRunning],
	// [RateLimit], [WithExpiry] and [WithBreaker] (its zero fields filled
	// in); zero fields: none.
	Kind KindOptions
	// RecordedAt is when the worker recorded this value; a worker that
	// finds the same value recorded writes nothing, so it is when the
	// value was first recorded.
	RecordedAt time.Time
	// Host and PID name the worker's process.
	Host string
	PID  int
}

// RecordedPolicies returns the retry policies and kind options that the
// workers on the database use, as each [Queue.Work] and [Queue.RunDue]
// recorded them: at its start, when [Queue.Handle] gives it a new kind,
// and at most once an hour after that, each value only where it changed.
// It returns the default policy first, then the named policies and the
// kinds, each by name; none before a worker has run. Several apps on one
// database each record their own: a scope holds the value its last
// recorder wrote, and the scopes that one app does not have keep what
// another wrote. A read-only Queue records nothing, but reads them; on a
// file that only binaries older than the record have written, it reads
// none.
func (q *Queue) RecordedPolicies(ctx context.Context) ([]RecordedPolicy, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if !q.st.info.Recorded {
		return nil, nil // a file that only older binaries wrote, opened read-only
	}
	rows, err := store.Policies(ctx, q.st.reads)
	if err != nil {
		return nil, fmt.Errorf("litequeue: recorded policies: %w", err)
	}
	out := make([]RecordedPolicy, 0, len(rows))
	for _, r := range rows {
		p, err := decodeRecorded(r)
		if err != nil {
			return nil, fmt.Errorf("litequeue: recorded policies: %s %q: %w", r.Scope, r.Name, err)
		}
		out = append(out, p)
	}
	// The rows come by scope and name; the default goes first, then the
	// named policies, which the kinds name.
	slices.SortStableFunc(out, func(a, b RecordedPolicy) int { return recordedRank[a.Scope] - recordedRank[b.Scope] })
	return out, nil
}

// The scopes of litequeue_policies.
const (
	recordedDefault = "default"
	recordedPolicy  = "policy"
	recordedKind    = "kind"
)

// recordedRank orders the scopes in RecordedPolicies.
var recordedRank = map[string]int{recordedDefault: 0, recordedPolicy: 1, recordedKind: 2}

// policyRecorder makes the rows of litequeue_policies of a Queue's
// resolved options and handlers.
type policyRecorder struct {
	opts *Options // resolved
	reg  *registry
	host string
	pid  int
}

func newPolicyRecorder(opts *Options, reg *registry) *policyRecorder {
	host, _ := os.Hostname()
	return &policyRecorder{opts: opts, reg: reg, host: host, pid: os.Getpid()}
}

// record writes, in tx, the rows of the policies and of kinds (each with
// a handler) that changed, as recorded at now.
func (r *policyRecorder) record(ctx context.Context, tx store.Execer, kinds []string, now time.Time) error {
	rows := r.rows(kinds, store.MS(now))
	if _, err := store.RecordPolicies(ctx, tx, rows); err != nil {
		return fmt.Errorf("record the policies: %w", err)
	}
	return nil
}

// rows returns the rows of the default policy, the named ones, and kinds.
func (r *policyRecorder) rows(kinds []string, at int64) []store.PolicyRow {
	row := func(scope, name string, v any) store.PolicyRow {
		b, _ := json.Marshal(v) // of plain fields: never fails
		return store.PolicyRow{Scope: scope, Name: name, Value: string(b), RecordedAt: at, Host: r.host, PID: r.pid}
	}
	rows := []store.PolicyRow{row(recordedDefault, "", policyValueOf(r.opts.Retry))}
	for name, p := range r.opts.Policies {
		rows = append(rows, row(recordedPolicy, name, policyValueOf(p)))
	}
	for _, kind := range kinds {
		if hd := r.reg.get(kind); hd != nil {
			rows = append(rows, row(recordedKind, kind, kindValueOf(hd)))
		}
	}
	return rows
}

// decodeRecorded returns the RecordedPolicy of a row.
func decodeRecorded(r store.PolicyRow) (RecordedPolicy, error) {
	p := RecordedPolicy{Scope: r.Scope, Name: r.Name, RecordedAt: store.FromMS(r.RecordedAt), Host: r.Host, PID: r.PID}
	if r.Scope != recordedKind {
		var v policyValue
		err := json.Unmarshal([]byte(r.Value), &v)
		p.Policy = v.policy()
		return p, err
	}
	var v kindValue
	if err := json.Unmarshal([]byte(r.Value), &v); err != nil {
		return p, err
	}
	p.Policy, p.UsesPolicy, p.Timeout = v.Retry.policy(), v.Policy, time.Duration(v.Timeout)
	p.Kind = KindOptions{MaxRunning: v.MaxRunning, RateLimit: v.RateLimit, RatePer: time.Duration(v.RatePer),
		ExpireAfter: time.Duration(v.ExpireAfter)}
	if b := v.Breaker; b != nil {
		p.Kind.Breaker = &Breaker{Failures: b.Failures, Ratio: b.Ratio, Window: time.Duration(b.Window),
			Cooldown: time.Duration(b.Cooldown), MaxCooldown: time.Duration(b.MaxCooldown)}
	}
	return p, nil
}

// policyValue is a Policy as litequeue_policies holds it.
type policyValue struct {
	Backoff  Backoff `json:"backoff"`
	Base     millis  `json:"base_ms"`
	Ceiling  millis  `json:"ceiling_ms"`
	MaxTries int     `json:"max_tries"`
	Jitter   Jitter  `json:"jitter"`
}

func policyValueOf(p Policy) policyValue {
	return policyValue{p.Backoff, millis(p.Base), millis(p.Ceiling), p.MaxTries, p.Jitter}
}

func (v policyValue) policy() Policy {
	return Policy{Backoff: v.Backoff, Base: time.Duration(v.Base), Ceiling: time.Duration(v.Ceiling), MaxTries: v.MaxTries, Jitter: v.Jitter}
}

// kindValue is what a kind's handler resolved to, as litequeue_policies
// holds it.
type kindValue struct {
	Policy      string        `json:"policy"` // the name of UsePolicy; "": the default
	Retry       policyValue   `json:"retry"`
	Timeout     millis        `json:"timeout_ms"`
	MaxRunning  int           `json:"max_running"`
	RateLimit   int           `json:"rate_limit"`
	RatePer     millis        `json:"rate_per_ms"`
	ExpireAfter millis        `json:"expire_after_ms"`
	Breaker     *breakerValue `json:"breaker"` // null: none
}

// breakerValue is a resolved Breaker as litequeue_policies holds it.
type breakerValue struct {
	Failures    int     `json:"failures"`
	Ratio       float64 `json:"ratio"`
	Window      millis  `json:"window_ms"`
	Cooldown    millis  `json:"cooldown_ms"`
	MaxCooldown millis  `json:"max_cooldown_ms"`
}

func kindValueOf(hd *handler) kindValue {
	v := kindValue{Policy: hd.policyName, Retry: policyValueOf(hd.policy), Timeout: millis(hd.timeout),
		MaxRunning: hd.limits.running, RateLimit: hd.limits.rate, RatePer: millis(hd.limits.per)}
	if hd.expirySet {
		v.ExpireAfter = millis(hd.expiry)
	}
	if b := hd.breaker; b != nil {
		v.Breaker = &breakerValue{b.Failures, b.Ratio, millis(b.Window), millis(b.Cooldown), millis(b.MaxCooldown)}
	}
	return v
}

// millis is a duration written in JSON as milliseconds: a whole number
// where it is one, with the fraction where it is not (1.5 for 1500µs),
// in decimal digits, not through a float, so that every duration comes
// back as it was, to the nanosecond and up to the longest a Duration holds.
type millis time.Duration

func (m millis) MarshalJSON() ([]byte, error) {
	d := time.Duration(m)
	whole, frac := d/time.Millisecond, d%time.Millisecond
	sign := ""
	if d < 0 {
		sign, whole, frac = "-", -whole, -frac
	}
	s := sign + strconv.FormatInt(int64(whole), 10)
	if frac != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%06d", int64(frac)), "0")
	}
	return []byte(s), nil
}

func (m *millis) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	d, err := parseMillis(n.String())
	*m = millis(d)
	return err
}

// parseMillis reads a number of milliseconds, as millis writes it, to the
// nanosecond; one written otherwise (an exponent, digits past the
// nanosecond) is read as a float. Beyond the range of a Duration it
// saturates.
func parseMillis(s string) (time.Duration, error) {
	digits, neg := strings.CutPrefix(s, "-")
	whole, frac, _ := strings.Cut(digits, ".")
	ms, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || len(frac) > 6 || strings.ContainsAny(frac, "eE+-") {
		f, err := strconv.ParseFloat(s, 64)
		return saturate(f * float64(time.Millisecond)), err
	}
	ns, _ := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64) // "" is 0
	if ms > (math.MaxInt64-ns)/int64(time.Millisecond) {
		ms, ns = math.MaxInt64/int64(time.Millisecond), math.MaxInt64%int64(time.Millisecond)
	}
	d := time.Duration(ms)*time.Millisecond + time.Duration(ns)
	if neg {
		d = -d
	}
	return d, nil
}

// saturate is ns as a Duration, the nearest one beyond its range.
func saturate(ns float64) time.Duration {
	switch {
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(math.Round(ns))
}
