package litequeue_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// recorded reads q's recorded policies.
func recorded(t *testing.T, q *litequeue.Queue) []litequeue.RecordedPolicy {
	t.Helper()
	got, err := q.RecordedPolicies(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// appOptions are the options of the app of the tests of the recorded
// policies: a default policy, a named one, and a kind's flow control.
func appOptions(clk litequeue.Options) litequeue.Options {
	clk.Retry = litequeue.Policy{Base: 1500 * time.Microsecond, MaxTries: 5, Jitter: litequeue.EqualJitter}
	clk.Policies = map[string]litequeue.Policy{"payments": {Backoff: litequeue.Linear, MaxTries: 12}}
	clk.Kinds = map[string]litequeue.KindOptions{"resize": {MaxRunning: 2, ExpireAfter: time.Hour, Breaker: &litequeue.Breaker{Failures: 5}}}
	return clk
}

// handleApp gives q the app's handlers: charge with the named policy, a
// timeout and a rate limit; resize with its entry of Options.Kinds; and
// plain with no option at all.
func handleApp(q *litequeue.Queue) {
	q.Handle("charge", ok, litequeue.UsePolicy("payments"), litequeue.WithTimeout(30*time.Second), litequeue.RateLimit(10, time.Minute))
	q.Handle("resize", ok)
	q.Handle("plain", ok)
}

// TestQueue_RecordedPolicies: Open and Enqueue record nothing; a worker's
// RunDue records its default policy, its named policy and each kind it
// handles as they resolved, a sub-millisecond duration as it was, with
// the time and its process; the default comes first, then the policies,
// then the kinds.
func TestQueue_RecordedPolicies(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, appOptions(litequeue.Options{Clock: clk}))
	handleApp(q)
	enqueue(t, q, "plain", nil)
	if got := recorded(t, q); len(got) != 0 {
		t.Fatalf("recorded before any worker ran: %+v", got)
	}
	runDue(t, q)
	host, _ := os.Hostname()
	at, pid := clk.Now(), os.Getpid()
	def := litequeue.Policy{Backoff: litequeue.Exponential, Base: 1500 * time.Microsecond, Ceiling: 15 * time.Minute,
		MaxTries: 5, Jitter: litequeue.EqualJitter}
	payments := litequeue.Policy{Backoff: litequeue.Linear, Base: 1500 * time.Microsecond, Ceiling: 15 * time.Minute,
		MaxTries: 12, Jitter: litequeue.EqualJitter}
	breaker := &litequeue.Breaker{Failures: 5, Ratio: 0.5, Window: time.Minute, Cooldown: 30 * time.Second, MaxCooldown: 10 * time.Minute}
	want := []litequeue.RecordedPolicy{
		{Scope: "default", Policy: def},
		{Scope: "policy", Name: "payments", Policy: payments},
		{Scope: "kind", Name: "charge", Policy: payments, UsesPolicy: "payments", Timeout: 30 * time.Second,
			Kind: litequeue.KindOptions{RateLimit: 10, RatePer: time.Minute}},
		{Scope: "kind", Name: "plain", Policy: def},
		{Scope: "kind", Name: "resize", Policy: def, Kind: litequeue.KindOptions{MaxRunning: 2, ExpireAfter: time.Hour, Breaker: breaker}},
	}
	for i := range want {
		want[i].RecordedAt, want[i].Host, want[i].PID = at, host, pid
	}
	if diff := cmp.Diff(want, recorded(t, q)); diff != "" {
		t.Errorf("RecordedPolicies (-want +got):\n%s", diff)
	}
}

// TestQueue_RecordedPolicies_Unchanged: the same app started again later
// writes nothing: each row keeps the time it was first recorded. A kind
// given a handler while the app works is recorded at its next record,
// the others left as they were.
func TestQueue_RecordedPolicies_Unchanged(t *testing.T) {
	t.Parallel()
	clk := newMock()
	path := filepath.Join(t.TempDir(), "queue.db")
	first := openAt(t, path, appOptions(litequeue.Options{Clock: clk}))
	handleApp(first)
	runDue(t, first)
	before := recorded(t, first)
	first.Close()

	clk.Add(time.Hour)
	again := openAt(t, path, appOptions(litequeue.Options{Clock: clk}))
	handleApp(again)
	runDue(t, again)
	if diff := cmp.Diff(before, recorded(t, again)); diff != "" {
		t.Errorf("the same app again changed the rows (-before +after):\n%s", diff)
	}

	clk.Add(time.Minute)
	again.Handle("late", ok, litequeue.WithTimeout(time.Second))
	runDue(t, again)
	var others []litequeue.RecordedPolicy
	var late *litequeue.RecordedPolicy
	for _, p := range recorded(t, again) {
		if p.Name == "late" {
			late = &p
			continue
		}
		others = append(others, p)
	}
	if late == nil || late.Scope != "kind" || late.Timeout != time.Second || !late.RecordedAt.Equal(clk.Now()) {
		t.Errorf("late recorded as %+v, want a kind with a timeout of 1s, at %v", late, clk.Now())
	}
	if diff := cmp.Diff(before, others); diff != "" {
		t.Errorf("the rows of the other scopes changed (-before +after):\n%s", diff)
	}
}

// TestOpenReadOnly_BeforeRecords: a file that only binaries older than
// the record wrote has no litequeue_policies; opened read-only, which
// adds no table, it has no recorded policies, and its breakers are
// counted over the default window.
func TestOpenReadOnly_BeforeRecords(t *testing.T) {
	t.Parallel()
	fileOnly(t, "a server's tables are migrated by every Open")
	q, path := openQueue(t, litequeue.Options{})
	q.Handle("sync", doomed, litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Window: time.Hour}))
	enqueue(t, q, "sync", nil, litequeue.MaxTries(1))
	runDue(t, q)
	if _, err := q.DB().Exec(`DROP TABLE litequeue_policies`); err != nil { // as an older binary left it
		t.Fatal(err)
	}
	q.Close()
	ro := openReadOnly(t, path)
	if got, err := ro.RecordedPolicies(t.Context()); err != nil || len(got) != 0 {
		t.Errorf("RecordedPolicies = %+v, %v; want none", got, err)
	}
	b, err := ro.Breakers(t.Context())
	if want := (litequeue.BreakerStats{Failures: 1, Window: time.Minute}); err != nil ||
		b["sync"].State != "open" || b["sync"].Failures != want.Failures || b["sync"].Threshold != 0 || b["sync"].Window != want.Window {
		t.Errorf("Breakers = %+v, %v; want sync open, 1 failure in the default window, no threshold", b, err)
	}
}

// TestQueue_RecordedPolicies_LongDurations: durations that a float of
// milliseconds cannot hold to the nanosecond — the longest a Duration
// holds, a timeout meant as "never"; a year and a nanosecond — come back
// as they were given, not negative or rounded.
func TestQueue_RecordedPolicies_LongDurations(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Clock: newMock()})
	forever, year := time.Duration(math.MaxInt64), 365*24*time.Hour+time.Nanosecond
	q.Handle("long", ok, litequeue.WithTimeout(forever), litequeue.WithExpiry(year))
	runDue(t, q)
	var got *litequeue.RecordedPolicy
	for _, p := range recorded(t, q) {
		if p.Scope == "kind" && p.Name == "long" {
			got = &p
		}
	}
	if got == nil {
		t.Fatal("kind long not recorded")
	}
	if got.Timeout != forever || got.Kind.ExpireAfter != year {
		t.Errorf("recorded timeout %v and expiry %v, want %v and %v", got.Timeout, got.Kind.ExpireAfter, forever, year)
	}
}
