// Package litequeuetest helps the tests of programs that use litequeue.
// [Drain] runs a queue's jobs on a mock clock until nothing is due, as a
// test would by hand with RunDue, NextDue and clock.Set; [RequireEnqueued]
// and [RequireNotEnqueued] assert what was enqueued. Both fail the test
// with a message that lists the jobs concerned. The package works through
// litequeue's public API only, so a test can mix it with its own calls.
//
//	clk := clock.NewMock()
//	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{Clock: clk})
//	…
//	q.Handle("signup", signup) // enqueues "email.welcome"
//	if _, err := q.Enqueue(t.Context(), "signup", "ada@example.com"); err != nil {
//		t.Fatal(err)
//	}
//	litequeuetest.Drain(t, q, clk) // runs signup and its retries, moving clk
//	litequeuetest.RequireEnqueued(t, q, "email.welcome", litequeuetest.Payload("ada@example.com"))
//
// For a typed kind ([litequeue.Kind]), [RequireEnqueuedKind] takes the
// payload as a value of the kind's type, compared with go-cmp once read
// back as a job carries it:
//
//	litequeuetest.RequireEnqueuedKind(t, q, welcome, Email{To: "ada@example.com"})
//
// A job is found in any state: one that Drain has run and completed was
// enqueued all the same.
//
// A Queue that is also worked elsewhere (by Work, or by another process)
// while Drain runs it makes Drain's result depend on who claims what first.
package litequeuetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// Defaults of Drain's bounds.
const (
	// DefaultMaxSteps is how many times Drain calls RunDue before it gives
	// up: enough for a hundred jobs that each use the default policy's 8
	// tries at moments of their own.
	DefaultMaxSteps = 1000

	// DefaultMaxSpan is how far Drain moves the mock clock, in all, before
	// it gives up: a day, far more than the default policy's whole
	// schedule (4m14s at most), and no more than the default KeepFinished,
	// so that the jobs Drain finished are still there to assert on.
	DefaultMaxSpan = 24 * time.Hour
)

// A DrainOption changes one of Drain's bounds.
type DrainOption func(*drainLimits)

type drainLimits struct {
	steps int
	span  time.Duration
}

// MaxSteps bounds how many times Drain calls RunDue; it must be at least
// 1. Default: DefaultMaxSteps.
func MaxSteps(n int) DrainOption { return func(l *drainLimits) { l.steps = n } }

// MaxSpan bounds how far, in all, Drain moves the mock clock; it must be
// positive. Default: DefaultMaxSpan.
func MaxSpan(d time.Duration) DrainOption { return func(l *drainLimits) { l.span = d } }

// Drain runs q's due jobs with RunDue, moves clk to the moment NextDue
// reports, and repeats until nothing is due: until every job of a kind
// with a handler on q has finished (completed, dead, discarded or
// cancelled). Jobs of kinds without a handler on q stay pending and do not
// keep Drain going; nor do jobs waiting for their dependencies (see
// litequeue.DependsOn) that those jobs keep waiting. A whole graph of
// dependencies runs so: each job becomes due as its last dependency
// completes, within the RunDue call that completes it. Drain returns the number of handler runs, and leaves
// clk at the moment of the last run; it never moves clk back.
//
// Drain is bounded: it fails the test with tb.Fatalf, listing the jobs
// still pending or running, if something is still due after MaxSteps calls
// of RunDue, or if the next due moment lies more than MaxSpan past the
// clock's reading when Drain began (a job scheduled far ahead, a handler
// that snoozes forever); then clk is not moved past the span. A handler
// that snoozes for 0 forever keeps one RunDue call busy, which no step
// count sees: the test's own timeout ends it. An error from RunDue or
// NextDue also fails the test. Moving clk by more than Options.KeepFinished
// (24h by default) lets retention purge the jobs that finished first.
func Drain(tb testing.TB, q *litequeue.Queue, clk *clock.Mock, opts ...DrainOption) int {
	tb.Helper()
	limits := drainLimits{steps: DefaultMaxSteps, span: DefaultMaxSpan}
	for _, o := range opts {
		o(&limits)
	}
	if limits.steps < 1 {
		tb.Fatalf("litequeuetest.Drain: MaxSteps %d is below the minimum of 1", limits.steps)
		return 0
	}
	if limits.span <= 0 {
		tb.Fatalf("litequeuetest.Drain: MaxSpan %v is not positive", limits.span)
		return 0
	}
	ctx := tb.Context()
	start := clk.Now()
	runs := 0
	for step := 1; ; step++ {
		n, err := q.RunDue(ctx)
		runs += n
		if err != nil {
			tb.Fatalf("litequeuetest.Drain: RunDue: %v", err)
			return runs
		}
		next, ok, err := q.NextDue(ctx)
		if err != nil {
			tb.Fatalf("litequeuetest.Drain: NextDue: %v", err)
			return runs
		}
		if !ok {
			return runs
		}
		var limit string
		switch {
		case next.Sub(start) > limits.span:
			limit = fmt.Sprintf("the next is due at %s, past the MaxSpan of %v", since(start, next), limits.span)
		case step == limits.steps:
			limit = fmt.Sprintf("still due after the MaxSteps of %d calls of RunDue (at %s); the next at %s", step, since(start, clk.Now()), since(start, next))
		}
		if limit != "" {
			tb.Fatalf("litequeuetest.Drain: the queue did not settle after %d runs: %s\n%s", runs, limit, unfinished(tb, q, start))
			return runs
		}
		if next.After(clk.Now()) {
			clk.Set(next)
		}
	}
}

// maxListed bounds the jobs a failure message lists.
const maxListed = 20

// unfinished describes the jobs that are pending or running, for Drain's
// failure message, with times relative to start.
func unfinished(tb testing.TB, q *litequeue.Queue, start time.Time) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("pending or running jobs:")
	for _, s := range []litequeue.State{litequeue.Pending, litequeue.Running} {
		jobs, err := q.List(tb.Context(), litequeue.Filter{State: s, Limit: maxListed + 1})
		if err != nil {
			fmt.Fprintf(&b, "\n\t(list %s jobs: %v)", s, err)
			continue
		}
		for i, j := range jobs {
			if i == maxListed {
				fmt.Fprintf(&b, "\n\t… and more %s jobs", s)
				break
			}
			fmt.Fprintf(&b, "\n\t%s", describe(j, start))
		}
	}
	return b.String()
}

// describe is one line about a job, for failure messages: its times are
// relative to start, or absolute if start is zero.
func describe(j *litequeue.Job, start time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %d %s: queue %q, %s, attempt %d of %d, priority %d", j.ID, j.Kind, j.Queue, j.State, j.Attempt, j.MaxTries, j.Priority)
	if j.State == litequeue.Pending || j.State == litequeue.Running {
		if start.IsZero() {
			fmt.Fprintf(&b, ", run at %s", j.RunAt.Format(time.RFC3339Nano))
		} else {
			fmt.Fprintf(&b, ", run at %s", since(start, j.RunAt))
		}
	}
	if j.UniqueKey != "" {
		fmt.Fprintf(&b, ", unique key %q", j.UniqueKey)
	}
	switch {
	case len(j.Payload) == 0:
		b.WriteString(", empty payload")
	case json.Valid(j.Payload):
		fmt.Fprintf(&b, ", payload %s", clip(string(j.Payload)))
	default:
		fmt.Fprintf(&b, ", payload %q (not JSON)", clip(string(j.Payload)))
	}
	if j.LastError != "" {
		fmt.Fprintf(&b, ", last error %q", clip(j.LastError))
	}
	return b.String()
}

// clip shortens s for a failure message.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// since formats t as an offset from start: "+1m30s", "-5s".
func since(start, t time.Time) string {
	d := t.Sub(start)
	if d < 0 {
		return d.String()
	}
	return "+" + d.String()
}
