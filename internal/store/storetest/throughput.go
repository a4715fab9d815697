package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// The cases of the throughput (store/throughput.go): the ends that the
// settle of run ends stores are counted in its transaction, per minute,
// outcome and the writer's shard.

// minute0 is the start of a minute, the first of the ends of these cases.
var minute0 = time.UnixMilli(1_700_000_040_000)

// runEnd makes a running job and returns the end of its run, which
// finishes at finished, as the settle is given it: the job in state
// next after it, its history row recording outcome.
func runEnd(t *testing.T, f *Fixture, outcome, next string, finished time.Time) *store.RunEnd[struct{}] {
	t.Helper()
	id := putJob(t, f, "q", "k", inState("running", 0))
	var claimed *store.JobRow
	err := f.Write(t.Context(), func(tx store.Execer) (err error) {
		claimed, err = store.LockJob(t.Context(), tx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	after := *claimed
	after.State, after.FinishedAt = next, store.NullMS(finished)
	h := &store.HistoryRow{AttemptRow: store.AttemptRow{Attempt: 1, StartedAt: store.MS(finished) - 10,
		FinishedAt: store.MS(finished), Outcome: outcome}, JobID: id, Kind: "k", Next: next}
	return &store.RunEnd[struct{}]{Claimed: claimed, After: after, History: h}
}

// throughputSteps are the settle's steps of these cases. Redecide decides
// the end of a job in redecide again as cancelled, writing its row, and
// reports every other job lost; Claim fails when fail is set, which rolls
// the batch back.
type throughputSteps struct {
	redecide map[int64]bool
	fail     bool
}

func (s *throughputSteps) Redecide(ctx context.Context, tx store.Execer, e *store.RunEnd[struct{}]) (bool, error) {
	if !s.redecide[e.Claimed.ID] {
		return false, nil
	}
	row, err := store.LockJob(ctx, tx, e.Claimed.ID)
	if err != nil {
		return false, err
	}
	row.State = "cancelled"
	if err := store.SetRow(ctx, tx, row); err != nil {
		return false, err
	}
	h := *e.History
	h.Outcome, h.Next = "cancelled", "cancelled"
	e.After, e.History = *row, &h
	return true, nil
}

func (s *throughputSteps) Ran(context.Context, store.Execer, []*store.RunEnd[struct{}]) error {
	return nil
}

func (s *throughputSteps) Claim(context.Context, store.Execer, []*store.RunEnd[struct{}]) error {
	if s.fail {
		return errors.New("the claim failed")
	}
	return nil
}

// settleAll settles the ends on w at once, each a write of its own from a
// goroutine of its own, so that the writer commits them in one batch or
// several, and fails the test if any write fails.
func settleAll(t *testing.T, w *store.Writer[struct{}], ends []*store.RunEnd[struct{}]) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(ends))
	for i, e := range ends {
		wg.Go(func() { errs[i] = w.Do(&store.Op[struct{}]{Ctx: t.Context(), End: e}) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// checkThroughput checks that the counts of the hour from minute0, read
// per step, are want.
func checkThroughput(t *testing.T, f *Fixture, what string, step time.Duration, want []store.ThroughputRow) {
	t.Helper()
	from := store.MS(minute0)
	rows, err := store.Throughput(t.Context(), f.Reads, from, from+time.Hour.Milliseconds(), step.Milliseconds())
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 && len(rows) == 0 {
		return
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("%s: Throughput per %v (-want +got):\n%s", what, step, diff)
	}
}

// testThroughput: the settle of a batch of mixed run ends counts each
// stored end in the minute it finished in: completed, retried (a failed
// run back to pending), dead, discarded and cancelled; a snooze counts
// nothing; an end whose fence did not hold counts what Redecide decided
// again, or nothing when the run lost its job. Throughput adds the
// minutes up per step, and leaves out those outside its span.
func testThroughput(t *testing.T, f *Fixture) {
	m1 := minute0.Add(time.Minute + 59*time.Second + 999*time.Millisecond) // the last ms of the next minute
	ends := []*store.RunEnd[struct{}]{
		runEnd(t, f, "completed", "completed", minute0),
		runEnd(t, f, "completed", "completed", minute0.Add(30*time.Second)),
		runEnd(t, f, "completed", "completed", m1),
		runEnd(t, f, "failed", "pending", minute0),
		runEnd(t, f, "timed_out", "pending", m1),
		runEnd(t, f, "panicked", "dead", m1),
		runEnd(t, f, "discarded", "discarded", minute0),
		runEnd(t, f, "cancelled", "cancelled", minute0),
		runEnd(t, f, "snoozed", "pending", minute0),
		runEnd(t, f, "completed", "completed", minute0.Add(-time.Millisecond)), // before the hour read
		runEnd(t, f, "completed", "completed", minute0.Add(time.Hour)),         // after it
	}
	redecided := runEnd(t, f, "failed", "pending", minute0) // Cancel asked it to stop
	lost := runEnd(t, f, "completed", "completed", minute0) // its lease was lost
	for _, e := range []*store.RunEnd[struct{}]{redecided, lost} {
		set(t, f, e.Claimed.ID, `cancel = 1`)
	}
	ends = append(ends, redecided, lost)
	f.Writer.Steps = &throughputSteps{redecide: map[int64]bool{redecided.Claimed.ID: true}}
	settleAll(t, f.Writer, ends)
	if !redecided.Stored || lost.Stored {
		t.Fatalf("stored: redecided %v, lost %v; want true, false", redecided.Stored, lost.Stored)
	}
	m0, m1ms := store.MS(minute0), store.MS(minute0.Add(time.Minute))
	checkThroughput(t, f, "mixed ends", time.Minute, []store.ThroughputRow{
		{Start: m0, Outcome: "cancelled", N: 2},
		{Start: m0, Outcome: "completed", N: 2},
		{Start: m0, Outcome: "discarded", N: 1},
		{Start: m0, Outcome: "retried", N: 1},
		{Start: m1ms, Outcome: "completed", N: 1},
		{Start: m1ms, Outcome: "dead", N: 1},
		{Start: m1ms, Outcome: "retried", N: 1},
	})
	hour := m0 - m0%time.Hour.Milliseconds() // the spans of a step are aligned on Unix time
	checkThroughput(t, f, "mixed ends", time.Hour, []store.ThroughputRow{
		{Start: hour, Outcome: "cancelled", N: 2},
		{Start: hour, Outcome: "completed", N: 3},
		{Start: hour, Outcome: "dead", N: 1},
		{Start: hour, Outcome: "discarded", N: 1},
		{Start: hour, Outcome: "retried", N: 2},
	})
}

// testThroughputRollback: a settle rolled back (a step of the machinery
// failed) counts nothing, and the ends it would have counted are counted
// once when they are settled again.
func testThroughputRollback(t *testing.T, f *Fixture) {
	e := runEnd(t, f, "completed", "completed", minute0)
	e.Next = true // the claim of the worker's next job fails
	f.Writer.Steps = &throughputSteps{fail: true}
	if err := f.Writer.Do(&store.Op[struct{}]{Ctx: t.Context(), End: e}); err == nil {
		t.Fatal("a settle whose claim failed committed")
	}
	checkThroughput(t, f, "after a rollback", time.Minute, nil)
	f.Writer.Steps = &throughputSteps{}
	settleAll(t, f.Writer, []*store.RunEnd[struct{}]{e})
	checkThroughput(t, f, "settled again", time.Minute, []store.ThroughputRow{{Start: store.MS(minute0), Outcome: "completed", N: 1}})
}

// testThroughputShards: two writers, as two processes have, each in a
// shard of its own, settle ends at once, in the same minutes: each adds
// to its own rows, and Throughput adds the shards up.
func testThroughputShards(t *testing.T, f *Fixture) {
	other := f.OtherWriter(t)
	f.Writer.Shard, other.Shard = 3, 11
	f.Writer.Steps, other.Steps = &throughputSteps{}, &throughputSteps{}
	var mine, theirs []*store.RunEnd[struct{}]
	for i := range 20 {
		at := minute0.Add(time.Duration(i%2) * time.Minute)
		mine = append(mine, runEnd(t, f, "completed", "completed", at))
		theirs = append(theirs, runEnd(t, f, "failed", "pending", at), runEnd(t, f, "completed", "completed", at))
	}
	var wg sync.WaitGroup
	wg.Go(func() { settleAll(t, f.Writer, mine) })
	wg.Go(func() { settleAll(t, other, theirs) })
	wg.Wait()
	m0, m1 := store.MS(minute0), store.MS(minute0.Add(time.Minute))
	checkThroughput(t, f, "two writers", time.Minute, []store.ThroughputRow{
		{Start: m0, Outcome: "completed", N: 20},
		{Start: m0, Outcome: "retried", N: 10},
		{Start: m1, Outcome: "completed", N: 20},
		{Start: m1, Outcome: "retried", N: 10},
	})
	var shards []int
	if err := f.Reads.SelectContext(t.Context(), &shards, `SELECT DISTINCT shard FROM litequeue_throughput ORDER BY shard`); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{3, 11}, shards); diff != "" {
		t.Errorf("shards written (-want +got):\n%s", diff)
	}
}

// testCountEnd: CountEnd adds n ends of an outcome to a minute, none for
// n = 0, and adds to a minute's count of the same shard.
func testCountEnd(t *testing.T, f *Fixture) {
	ctx := t.Context()
	at := store.MS(minute0.Add(59 * time.Second))
	for _, n := range []int{2, 0, 3} {
		if err := f.Write(ctx, func(tx store.Execer) error { return store.CountEnd(ctx, tx, 5, at, store.EndExpired, n) }); err != nil {
			t.Fatal(err)
		}
	}
	checkThroughput(t, f, "CountEnd", time.Minute, []store.ThroughputRow{{Start: store.MS(minute0), Outcome: "expired", N: 5}})
}

// testDeleteThroughput: OldThroughput finds the newest of the oldest
// minutes before a cutoff, at most a limit of them, and DeleteThroughput
// deletes every shard's counts up to it, and nothing newer.
func testDeleteThroughput(t *testing.T, f *Fixture) {
	ctx := t.Context()
	err := f.Write(ctx, func(tx store.Execer) error {
		for m := range 5 {
			for shard := range 2 {
				at := store.MS(minute0.Add(time.Duration(m) * time.Minute))
				if err := store.CountEnd(ctx, tx, shard, at, store.EndCompleted, 1); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	minute := func(m int) int64 { return store.MS(minute0.Add(time.Duration(m) * time.Minute)) }
	cutoff := minute(3) // minutes 0, 1 and 2 are older
	if through, found, err := store.OldThroughput(ctx, f.Reads, cutoff, 2); err != nil || !found || through != minute(1) {
		t.Fatalf("OldThroughput(limit 2) = %d, %v, %v; want minute 1 (%d)", through, found, err, minute(1))
	}
	if through, found, err := store.OldThroughput(ctx, f.Reads, cutoff, 10); err != nil || !found || through != minute(2) {
		t.Fatalf("OldThroughput(limit 10) = %d, %v, %v; want minute 2 (%d)", through, found, err, minute(2))
	}
	var deleted int
	err = f.Write(ctx, func(tx store.Execer) (err error) {
		deleted, err = store.DeleteThroughput(ctx, tx, minute(2))
		return err
	})
	if err != nil || deleted != 6 {
		t.Fatalf("DeleteThroughput = %d, %v; want the 6 rows of 3 minutes in 2 shards", deleted, err)
	}
	if _, found, err := store.OldThroughput(ctx, f.Reads, cutoff, 10); err != nil || found {
		t.Fatalf("OldThroughput after the delete: found %v, %v; want none", found, err)
	}
	checkThroughput(t, f, "left after the delete", time.Minute, []store.ThroughputRow{
		{Start: minute(3), Outcome: "completed", N: 2},
		{Start: minute(4), Outcome: "completed", N: 2},
	})
}

// testThroughputOwnShards: on an engine whose writers write at once, each
// writer draws a shard of its own, so that two processes' transactions
// never add to one row: two transactions that count the same two
// outcomes in opposite orders, each holding its first row while it
// writes the second, neither wait on each other nor deadlock (a deadlock
// would show as a transaction run again).
func testThroughputOwnShards(t *testing.T, f *Fixture) {
	if f.Engine.Serial() {
		t.Skip("the writers of this engine take turns: one shard")
	}
	seen := make(map[int]bool)
	for range 64 {
		seen[store.ShardFor(f.Engine)] = true
	}
	if len(seen) != 64 {
		t.Fatalf("64 writers drew %d shards, want one each", len(seen))
	}
	other := f.OtherWriter(t)
	f.Writer.Shard, other.Shard = store.ShardFor(f.Engine), store.ShardFor(f.Engine)
	at := store.MS(minute0)
	firsts := make(chan struct{}, 2)
	count := func(w *store.Writer[struct{}], order []string, runs *atomic.Int32) error {
		return w.Do(&store.Op[struct{}]{Ctx: t.Context(), Fn: func(tx store.Execer) error {
			runs.Add(1)
			if err := store.CountEnd(t.Context(), tx, w.Shard, at, order[0], 1); err != nil {
				return err
			}
			select {
			case firsts <- struct{}{}:
			default: // a run again, after a deadlock
			}
			for deadline := time.Now().Add(10 * time.Second); len(firsts) < 2 && runs.Load() < 2; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					return errors.New("the other transaction did not write its first count in 10s")
				}
			}
			return store.CountEnd(t.Context(), tx, w.Shard, at, order[1], 1)
		}})
	}
	var mine, theirs atomic.Int32
	var wg sync.WaitGroup
	var errMine, errTheirs error
	wg.Go(func() { errMine = count(f.Writer, []string{store.EndCompleted, store.EndExpired}, &mine) })
	wg.Go(func() { errTheirs = count(other, []string{store.EndExpired, store.EndCompleted}, &theirs) })
	wg.Wait()
	if errMine != nil || errTheirs != nil || mine.Load() != 1 || theirs.Load() != 1 {
		t.Fatalf("transactions: errors %v, %v; run %d and %d times, want once each", errMine, errTheirs, mine.Load(), theirs.Load())
	}
	checkThroughput(t, f, "two writers in opposite orders", time.Minute, []store.ThroughputRow{
		{Start: at, Outcome: "completed", N: 2},
		{Start: at, Outcome: "expired", N: 2},
	})
}
