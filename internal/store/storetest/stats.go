package storetest

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of idempotency keys and of the figures of a queue.

// testKeys: a key marked until T is seen before T and not from T on, T
// rounded up to a whole millisecond; marking it again sets its expiry,
// earlier or later, expired or not.
func testKeys(t *testing.T, f *Fixture) {
	ctx := t.Context()
	base := time.UnixMilli(1_700_000_000_000)
	mark := func(key string, expires time.Time) {
		t.Helper()
		if err := f.Write(ctx, func(tx store.Execer) error { return store.MarkKey(ctx, tx, key, expires) }); err != nil {
			t.Fatal(err)
		}
	}
	seen := func(key string, at time.Time, want bool) {
		t.Helper()
		if got, err := store.KeySeen(ctx, f.Reads, key, at); err != nil || got != want {
			t.Errorf("KeySeen(%s) at base%+v = %v, %v; want %v", key, at.Sub(base), got, err, want)
		}
	}
	mark("a", base.Add(500*time.Microsecond)) // kept as base+1ms
	seen("a", base, true)
	seen("a", base.Add(999*time.Microsecond), true)
	seen("a", base.Add(time.Millisecond), false)
	seen("b", base, false)
	mark("a", base.Add(time.Hour)) // expired, marked again
	seen("a", base.Add(time.Hour-time.Millisecond), true)
	mark("a", base.Add(time.Minute)) // marked again, earlier
	seen("a", base.Add(time.Minute), false)
	seen("a", base.Add(time.Minute-time.Millisecond), true)
}

// testCountByState: CountByState counts each queue's jobs by state, the
// pending ones split at now into due (with their earliest RunAt) and not;
// DueKinds names the kinds with due jobs, sorted.
func testCountByState(t *testing.T, f *Fixture) {
	ctx := t.Context()
	putJob(t, f, "q1", "k1", inState("pending", 100))
	putJob(t, f, "q1", "k1", inState("pending", 120))
	putJob(t, f, "q1", "k2", inState("pending", 200))
	putJob(t, f, "q1", "k1", finished("dead", 10, "boom"))
	putJob(t, f, "q2", "k3", inState("pending", 50))
	groups, err := store.CountByState(ctx, f.Reads, 150)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range groups {
		oldest := "NULL"
		if g.Oldest.Valid {
			oldest = strconv.FormatInt(g.Oldest.Int64, 10)
		}
		got = append(got, fmt.Sprintf("%s %s %v %d %s", g.Queue, g.State, g.Due, g.N, oldest))
	}
	slices.Sort(got)
	want := []string{
		"q1 dead false 1 NULL",
		"q1 pending false 1 200",
		"q1 pending true 2 100",
		"q2 pending true 1 50",
	}
	if !slices.Equal(got, want) {
		t.Errorf("CountByState:\n got %q\nwant %q", got, want)
	}
	if kinds, err := store.DueKinds(ctx, f.Reads, 150); err != nil || !slices.Equal(kinds, []string{"k1", "k3"}) {
		t.Errorf("DueKinds = %v, %v; want [k1 k3]", kinds, err)
	}
}

// testFailures: RetriesSince counts the failed runs after which the job
// went back to pending, DeathsSince the runs after which it went dead,
// each per kind and error class, most first, of the runs that finished
// after a moment; FailuresSince counts both per minute as well. A job
// goes dead only at the end of a failed run (route in the root's
// decide.go), and each death here is one.
func testFailures(t *testing.T, f *Fixture) {
	ctx := t.Context()
	id := putJob(t, f, "q", "k1", nil)
	run := func(finished int64, outcome, class, next string) *store.HistoryRow {
		return &store.HistoryRow{
			AttemptRow: store.AttemptRow{Attempt: 1, FinishedAt: finished, Outcome: outcome, ErrorClass: class},
			JobID:      id, Kind: "k1", Next: next,
		}
	}
	rows := []*store.HistoryRow{
		run(500, "failed", "A", "pending"), // before the moment
		run(1000, "failed", "A", "pending"),
		run(1100, "timed_out", "A", "pending"),
		run(1200, "panicked", "B", "pending"),
		run(1250, "snoozed", "", "pending"),     // not a failure
		run(1260, "completed", "", "completed"), // not a failure
		run(1300, "failed", "A", "dead"),
		run(61_000, "failed", "C", "dead"), // a death, a minute on
		run(62_000, "completed", "", "completed"),
	}
	if err := f.Write(ctx, func(tx store.Execer) error { return store.AddHistory(ctx, tx, rows) }); err != nil {
		t.Fatal(err)
	}
	retries, err := store.RetriesSince(ctx, f.Reads, 900)
	if want := []store.ClassCount{{Kind: "k1", Class: "A", N: 2}, {Kind: "k1", Class: "B", N: 1}}; err != nil || !slices.Equal(retries, want) {
		t.Errorf("RetriesSince = %v, %v; want %v", retries, err, want)
	}
	deaths, err := store.DeathsSince(ctx, f.Reads, 900)
	if want := []store.ClassCount{{Kind: "k1", Class: "A", N: 1}, {Kind: "k1", Class: "C", N: 1}}; err != nil || !slices.Equal(deaths, want) {
		t.Errorf("DeathsSince = %v, %v; want %v", deaths, err, want)
	}
	failures, err := store.FailuresSince(ctx, f.Reads, 900)
	want := []store.FailureRow{
		{Minute: 0, Kind: "k1", Class: "A", Retries: 2, Deaths: 1},
		{Minute: 0, Kind: "k1", Class: "B", Retries: 1},
		{Minute: 60_000, Kind: "k1", Class: "C", Deaths: 1},
	}
	if err != nil || !slices.Equal(failures, want) {
		t.Errorf("FailuresSince = %v, %v; want %v", failures, err, want)
	}
}
