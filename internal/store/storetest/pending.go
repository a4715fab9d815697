package storetest

import (
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of the reads of pending jobs through the claim index
// by kind (schema.sql, version 6): the claim, a kind's earliest RunAt and
// the kinds due, also with thousands of jobs scheduled.

// addJobs inserts n pending jobs of queue and kind at priority, due at
// runAt, and returns their IDs.
func addJobs(t *testing.T, f *Fixture, queue, kind string, priority int, runAt int64, n int) []int64 {
	t.Helper()
	var ids []int64
	err := f.Write(t.Context(), func(tx store.Execer) (err error) {
		ids, err = f.Engine.InsertJobs(t.Context(), tx, &store.NewJobs{Queue: queue, Kind: kind, Priority: priority,
			RunAt: runAt, Payloads: make([][]byte, n), MaxTries: 3})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// claimIDs claims with cq in a write transaction, leasing every row read,
// and returns the IDs claimed in the order the claim read them.
func claimIDs(t *testing.T, f *Fixture, cq store.ClaimQuery) []int64 {
	t.Helper()
	var ids []int64
	err := f.Write(t.Context(), func(tx store.Execer) error {
		_, err := f.Engine.Claim(t.Context(), tx, cq, func(r *store.JobRow) bool {
			r.State, r.Attempt, r.Token, r.LeaseUntil, r.StartedAt, r.Worker = "running", r.Attempt+1, r.Token+1, 10_000, 1, "w"
			ids = append(ids, r.ID)
			return true
		})
		return err
	})
	if err != nil {
		t.Fatalf("claim %+v: %v", cq, err)
	}
	return ids
}

// testClaimByKind: a claim takes the due jobs of the kinds it is given,
// on its queues and none of the paused ones, in priority, then RunAt,
// then ID order across the kinds, up to its limit, and leaves alone the
// jobs of other kinds, those not due and those whose expiry has come.
func testClaimByKind(t *testing.T, f *Fixture) {
	a0 := addJobs(t, f, "q", "a", 0, 100, 2)     // a, priority 0, due at 100
	b5 := addJobs(t, f, "q", "b", 5, 300, 1)     // b, priority 5, due at 300
	a5 := addJobs(t, f, "q", "a", 5, 200, 1)     // a, priority 5, due at 200
	addJobs(t, f, "q", "c", 9, 0, 2)             // c: not claimed
	addJobs(t, f, "q", "a", 9, 5_000, 1)         // not due
	b0 := addJobs(t, f, "other", "b", 0, 50, 1)  // another queue
	p0 := addJobs(t, f, "paused", "a", 7, 50, 1) // a paused queue
	x := addJobs(t, f, "q", "b", 8, 50, 1)
	set(t, f, x[0], `expires_at = 900`) // expired at the claim
	now := store.FromMS(1000)
	for _, tc := range []struct {
		cq   store.ClaimQuery
		want []int64
	}{
		{store.ClaimQuery{Kinds: []string{"a", "b"}, Queues: []string{"q"}, Limit: 10},
			[]int64{a5[0], b5[0], a0[0], a0[1]}},
		{store.ClaimQuery{Kinds: []string{"b", "a"}, Paused: []string{"paused"}, Limit: 3},
			[]int64{a5[0], b5[0], b0[0]}},
		{store.ClaimQuery{Kinds: []string{"a"}, Limit: 2}, []int64{p0[0], a5[0]}},
		{store.ClaimQuery{Kinds: []string{"none"}, Limit: 2}, nil},
	} {
		tc.cq.Now = now
		var got []int64
		err := f.Write(t.Context(), func(tx store.Execer) error {
			_, err := f.Engine.Claim(t.Context(), tx, tc.cq, func(r *store.JobRow) bool {
				got = append(got, r.ID)
				return false // left pending, for the next case
			})
			return err
		})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("claim of %v on %v, paused %v, limit %d: %v, %v; want %v",
				tc.cq.Kinds, tc.cq.Queues, tc.cq.Paused, tc.cq.Limit, got, err, tc.want)
		}
	}
	if got, want := claimIDs(t, f, store.ClaimQuery{Kinds: []string{"a", "b"}, Queues: []string{"q"}, Limit: 2, Now: now}),
		[]int64{a5[0], b5[0]}; !slices.Equal(got, want) {
		t.Errorf("claim that leases: %v, want %v", got, want)
	}
	if got, want := claimIDs(t, f, store.ClaimQuery{Kinds: []string{"a", "b"}, Queues: []string{"q"}, Limit: 5, Now: now}),
		[]int64{a0[0], a0[1]}; !slices.Equal(got, want) {
		t.Errorf("claim after it: %v, want %v", got, want)
	}
}

// testNextPendingPriorities: NextPending reads a kind's earliest RunAt
// whatever the priorities of its pending jobs, and DueKinds the kinds
// whose earliest RunAt has come, where a job of higher priority is not
// due yet.
func testNextPendingPriorities(t *testing.T, f *Fixture) {
	ctx := t.Context()
	addJobs(t, f, "q", "k", 9, 900, 1)
	addJobs(t, f, "q", "k", 0, 300, 1)
	addJobs(t, f, "q", "k", -3, 700, 1)
	addJobs(t, f, "b", "k", -5, 200, 1)
	addJobs(t, f, "q", "late", 9, 2_000, 1)
	addJobs(t, f, "q", "late", 1, 1_500, 1)
	addJobs(t, f, "q", "soon", 9, 5_000, 1)
	addJobs(t, f, "q", "soon", -1, 100, 1)
	at := func(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: true} }
	for _, tc := range []struct {
		kind   string
		queues []string
		want   sql.NullInt64
	}{
		{"k", nil, at(200)},
		{"k", []string{"q"}, at(300)},
		{"late", nil, at(1_500)},
		{"soon", nil, at(100)},
		{"none", nil, sql.NullInt64{}},
	} {
		if got, err := store.NextPending(ctx, f.Reads, tc.kind, tc.queues, nil); err != nil || got != tc.want {
			t.Errorf("next pending of %s on %v: %v, %v; want %v", tc.kind, tc.queues, got, err, tc.want)
		}
	}
	for now, want := range map[int64][]string{50: {}, 100: {"soon"}, 250: {"k", "soon"}, 1_600: {"k", "late", "soon"}} {
		if got, err := store.DueKinds(ctx, f.Reads, now); err != nil || !slices.Equal(got, want) {
			t.Errorf("DueKinds at %d: %v, %v; want %v", now, got, err, want)
		}
	}
}

// testScheduledThousands: with thousands of jobs scheduled for later, of
// the kind claimed and of others, at several priorities, a claim takes
// the few due ones in order, and NextPending and DueKinds read what they
// read with none scheduled.
func testScheduledThousands(t *testing.T, f *Fixture) {
	ctx := t.Context()
	for i := range 6 {
		addJobs(t, f, "q", fmt.Sprint("k", i%3), i%2*10, int64(10_000+i), 500)
	}
	due := addJobs(t, f, "q", "k0", 0, 900, 2)
	dueHigh := addJobs(t, f, "q", "k1", 10, 950, 1)
	if got, err := store.NextPending(ctx, f.Reads, "k2", nil, nil); err != nil || got != (sql.NullInt64{Int64: 10_002, Valid: true}) {
		t.Errorf("next pending of k2: %v, %v; want 10002", got, err)
	}
	if got, err := store.DueKinds(ctx, f.Reads, 1000); err != nil || !slices.Equal(got, []string{"k0", "k1"}) {
		t.Errorf("DueKinds at 1000: %v, %v; want [k0 k1]", got, err)
	}
	start := time.Now()
	got := claimIDs(t, f, store.ClaimQuery{Kinds: []string{"k0", "k1", "k2"}, Limit: 10, Now: store.FromMS(1000)})
	if want := []int64{dueHigh[0], due[0], due[1]}; !slices.Equal(got, want) {
		t.Errorf("claim among 3,000 scheduled jobs: %v, want %v", got, want)
	}
	t.Logf("claim among 3,000 scheduled jobs: %v", time.Since(start))
	if got := claimIDs(t, f, store.ClaimQuery{Kinds: []string{"k0", "k1", "k2"}, Limit: 10, Now: store.FromMS(1000)}); len(got) != 0 {
		t.Errorf("claim once the due jobs are taken: %v, want none", got)
	}
}
