package storetest

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// The cases of retention, expiry, rescue and the due times: what the
// janitor, the rescuer and an idle worker's look read and write.

// insertJobs inserts n pending jobs of kind k on queue q, due at once, and
// returns their IDs.
func insertJobs(t *testing.T, f *Fixture, n int) []int64 {
	t.Helper()
	var ids []int64
	err := f.Write(t.Context(), func(tx store.Execer) (err error) {
		ids, err = f.Engine.InsertJobs(t.Context(), tx, &store.NewJobs{Queue: "q", Kind: "k", Payloads: make([][]byte, n), MaxTries: 3})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// set sets columns of the job's row: sets is the SET list, with ?
// parameters args.
func set(t *testing.T, f *Fixture, id int64, sets string, args ...any) {
	t.Helper()
	if _, err := f.Reads.ExecContext(t.Context(), `UPDATE litequeue_jobs SET `+sets+` WHERE id = ?`, append(args, id)...); err != nil {
		t.Fatal(err)
	}
}

// readsFirst checks that read, in a write transaction at now, returns
// the jobs want, in their order, and only the first of them with a limit
// of 1.
func readsFirst(t *testing.T, f *Fixture, what string, read func(context.Context, store.Execer, int64, int) ([]store.JobRow, error), now int64, want ...int64) {
	t.Helper()
	for _, limit := range []int{len(want) + 5, 1} {
		var rows []store.JobRow
		err := f.Write(t.Context(), func(tx store.Execer) (err error) {
			rows, err = read(t.Context(), tx, now, limit)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, r := range rows {
			got = append(got, r.ID)
		}
		if w := want[:min(limit, len(want))]; !slices.Equal(got, w) {
			t.Errorf("%s, limit %d: %v, want %v", what, limit, got, w)
		}
	}
}

// finishedJobs inserts six jobs, finished or not, some with history, for
// retention to find at a cutoff of 200, and returns their IDs: 0
// completed at 100, with two history rows; 1 dead at 100, with one; 2
// completed at 300; 3 pending; 4 of kind other, completed at 100; 5
// discarded at 200.
func finishedJobs(t *testing.T, f *Fixture) []int64 {
	t.Helper()
	ctx := t.Context()
	id := insertJobs(t, f, 6)
	set(t, f, id[0], `state = 'completed', finished_at = 100`)
	set(t, f, id[1], `state = 'dead', finished_at = 100`)
	set(t, f, id[2], `state = 'completed', finished_at = 300`)
	set(t, f, id[4], `state = 'completed', finished_at = 100, kind = 'other'`)
	set(t, f, id[5], `state = 'discarded', finished_at = 200`)
	history := []*store.HistoryRow{
		{AttemptRow: store.AttemptRow{Attempt: 1, Outcome: "failed"}, JobID: id[0], Kind: "k", Next: "pending"},
		{AttemptRow: store.AttemptRow{Attempt: 2, Outcome: "completed"}, JobID: id[0], Kind: "k", Next: "completed"},
		{AttemptRow: store.AttemptRow{Attempt: 1, Outcome: "failed"}, JobID: id[1], Kind: "k", Next: "dead"},
	}
	if err := f.Write(ctx, func(tx store.Execer) error { return store.AddHistory(ctx, tx, history) }); err != nil {
		t.Fatal(err)
	}
	return id
}

// testFinishedJobs: FinishedJobs finds only the jobs of its class in its
// states that finished at or before its cutoff, never more than its
// limit, with the size of their history.
func testFinishedJobs(t *testing.T, f *Fixture) {
	ctx := t.Context()
	id := finishedJobs(t, f)
	finished := []string{"completed", "discarded"}
	for _, tc := range []struct {
		name  string
		class store.Class
		want  []store.Finished
	}{
		{"every job", store.Class{}, []store.Finished{{ID: id[0], History: 2}, {ID: id[4]}, {ID: id[5]}}},
		{"of a kind", store.ClassOf(store.Scope{Kind: "k"}), []store.Finished{{ID: id[0], History: 2}, {ID: id[5]}}},
		{"but a kind", store.ClassOf(store.Scope{}, store.Scope{Kind: "other"}), []store.Finished{{ID: id[0], History: 2}, {ID: id[5]}}},
		{"of a kind on a queue", store.ClassOf(store.Scope{Queue: "q", Kind: "other"}), []store.Finished{{ID: id[4]}}},
		{"of another queue", store.ClassOf(store.Scope{Queue: "elsewhere"}), nil},
	} {
		got, err := store.FinishedJobs(ctx, f.Reads, tc.class, finished, 200, 10)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		slices.SortFunc(got, func(a, b store.Finished) int { return int(a.ID - b.ID) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: found %v, want %v", tc.name, got, tc.want)
		}
	}
	if got, err := store.FinishedJobs(ctx, f.Reads, store.Class{}, finished, 200, 2); err != nil || len(got) != 2 {
		t.Errorf("at most 2 of 3: found %v, %v", got, err)
	}
}

// testDeleteFinished: DeleteFinished deletes, with their history, only
// those of the IDs it is given that are still in its states and finished
// at or before its cutoff.
func testDeleteFinished(t *testing.T, f *Fixture) {
	ctx := t.Context()
	id := finishedJobs(t, f)
	var deleted int
	err := f.Write(ctx, func(tx store.Execer) (err error) {
		deleted, err = store.DeleteFinished(ctx, tx, id[:5], []string{"completed", "discarded"}, 200, 200)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var left, leftHistory []int64
	if err := f.Reads.SelectContext(ctx, &left, `SELECT id FROM litequeue_jobs ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if err := f.Reads.SelectContext(ctx, &leftHistory, `SELECT job_id FROM litequeue_attempts ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if want := []int64{id[1], id[2], id[3], id[5]}; deleted != 2 || !slices.Equal(left, want) || !slices.Equal(leftHistory, id[1:2]) {
		t.Errorf("%d deleted; jobs %v left, want %v; history of %v left, want of %v", deleted, left, want, leftHistory, id[1:2])
	}
}

// testPurgeKeys: ExpiredKeys finds only the keys expired at its time, never
// more than its limit; DeleteExpiredKeys deletes only those of the keys it
// is given that are still expired.
func testPurgeKeys(t *testing.T, f *Fixture) {
	ctx := t.Context()
	for key, at := range map[string]int64{"a": 100, "b": 200, "c": 300} {
		if _, err := f.Reads.ExecContext(ctx, `INSERT INTO litequeue_keys (key, expires_at) VALUES (?, ?)`, key, at); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.ExpiredKeys(ctx, f.Reads, 200, 10)
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("ExpiredKeys at 200: %v, %v; want [a b]", got, err)
	}
	if got, err := store.ExpiredKeys(ctx, f.Reads, 200, 1); err != nil || len(got) != 1 {
		t.Fatalf("ExpiredKeys at 200, limit 1: %v, %v; want one key", got, err)
	}
	var deleted int
	err = f.Write(ctx, func(tx store.Execer) (err error) {
		deleted, err = store.DeleteExpiredKeys(ctx, tx, []string{"a", "c", "none"}, 200)
		return err
	})
	var left []string
	if err == nil {
		err = f.Reads.SelectContext(ctx, &left, `SELECT key FROM litequeue_keys ORDER BY key`)
	}
	if err != nil || deleted != 1 || !slices.Equal(left, []string{"b", "c"}) {
		t.Errorf("DeleteExpiredKeys of a, c, none at 200: %d deleted, %v left, %v; want 1, [b c]", deleted, left, err)
	}
}

// testExpiredLeases: ExpiredLeases finds only the running jobs whose lease
// ended by the given time, the earliest ended first, never more than its
// limit; ClampLeases cuts only the leases that end after its time.
func testExpiredLeases(t *testing.T, f *Fixture) {
	ctx := t.Context()
	id := insertJobs(t, f, 4)
	set(t, f, id[0], `state = 'running', lease_until = 200`)
	set(t, f, id[1], `state = 'running', lease_until = 100`)
	set(t, f, id[2], `state = 'running', lease_until = 300`)
	set(t, f, id[3], `lease_until = 50`) // pending
	readsFirst(t, f, "leases expired at 200", store.ExpiredLeases, 200, id[1], id[0])
	if err := f.Write(ctx, func(tx store.Execer) error { return store.ClampLeases(ctx, tx, 250) }); err != nil {
		t.Fatal(err)
	}
	var until []int64
	if err := f.Reads.SelectContext(ctx, &until, `SELECT lease_until FROM litequeue_jobs ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if want := []int64{200, 100, 250, 50}; !slices.Equal(until, want) {
		t.Errorf("leases after a clamp to 250: %v, want %v", until, want)
	}
}

// testLockExpired: a lease the look saw expired is taken to be rescued
// only as the look saw it: not once it was renewed, settled, or rescued
// and claimed again in between (on a server, by another transaction that
// committed after the look read the row).
func testLockExpired(t *testing.T, f *Fixture) {
	ctx := t.Context()
	for _, tc := range []struct {
		name  string
		since string // what happened to the row after the look read it; "" nothing
		taken bool
	}{
		{"unchanged", ``, true},
		{"renewed", `lease_until = lease_until + 30000`, false},
		{"claimed again", `token = token + 1`, false},
		{"settled", `state = 'completed', lease_until = 0`, false},
	} {
		id := insertJobs(t, f, 1)[0]
		set(t, f, id, `state = 'running', attempt = 1, token = 1, lease_until = 1000, started_at = 500`)
		var seen []store.JobRow
		err := f.Write(ctx, func(tx store.Execer) (err error) {
			seen, err = store.ExpiredLeases(ctx, tx, 1000, 10)
			return err
		})
		if err != nil || len(seen) != 1 {
			t.Fatalf("%s: the look found %d expired leases, %v; want 1", tc.name, len(seen), err)
		}
		if tc.since != "" {
			set(t, f, id, tc.since)
		}
		var got *store.JobRow
		if err := f.Write(ctx, func(tx store.Execer) (err error) {
			got, err = store.LockExpired(ctx, tx, &seen[0])
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if taken := got != nil; taken != tc.taken {
			t.Errorf("%s: lease taken to be rescued: %v, want %v", tc.name, taken, tc.taken)
		}
		if got != nil && (got.Token != seen[0].Token || got.LeaseUntil != seen[0].LeaseUntil) {
			t.Errorf("%s: took token %d until %d, want the lease as seen: token %d until %d",
				tc.name, got.Token, got.LeaseUntil, seen[0].Token, seen[0].LeaseUntil)
		}
		set(t, f, id, `state = 'completed', lease_until = 0`) // out of the next look
	}
}

// testExpiries: ExpiryDue and DueExpiries see only the pending jobs whose
// expiry has come, DueExpiries the earliest first and never more than its
// limit.
func testExpiries(t *testing.T, f *Fixture) {
	ctx := t.Context()
	id := insertJobs(t, f, 5)
	set(t, f, id[0], `expires_at = 200`)
	set(t, f, id[1], `expires_at = 100`)
	set(t, f, id[2], `expires_at = 300`)
	set(t, f, id[3], `state = 'running', expires_at = 50`)
	// id[4] has no expiry
	for now, want := range map[int64]bool{40: false, 99: false, 100: true, 200: true} {
		if due, err := store.ExpiryDue(ctx, f.Reads, now); err != nil || due != want {
			t.Errorf("ExpiryDue at %d: %v, %v; want %v", now, due, err, want)
		}
	}
	readsFirst(t, f, "expiries due at 200", store.DueExpiries, 200, id[1], id[0])
}

// testBeforeClaim: BeforeClaim tells whether the expiry of a pending job
// has come, and whether anything is paused.
func testBeforeClaim(t *testing.T, f *Fixture) {
	ctx := t.Context()
	set(t, f, insertJobs(t, f, 1)[0], `expires_at = 100`)
	before := func(now int64) (expiring, paused bool) {
		t.Helper()
		err := f.Write(ctx, func(tx store.Execer) (err error) {
			expiring, paused, err = store.BeforeClaim(ctx, tx, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return expiring, paused
	}
	if expiring, paused := before(100); !expiring || paused {
		t.Errorf("at 100: expiring %v, paused %v; want true, false", expiring, paused)
	}
	if _, err := f.Reads.ExecContext(ctx, `INSERT INTO litequeue_paused (scope, name, since) VALUES ('queue', 'q', 0)`); err != nil {
		t.Fatal(err)
	}
	if expiring, paused := before(99); expiring || !paused {
		t.Errorf("at 99, a queue paused: expiring %v, paused %v; want false, true", expiring, paused)
	}
}

// testDueTimes: ReadLeaseTimes reads the earliest and latest leases of the
// running jobs, and whether anything is paused; NextPending the earliest
// RunAt of a kind's pending jobs on the queues it is given, but not the
// paused ones.
func testDueTimes(t *testing.T, f *Fixture) {
	ctx := t.Context()
	null := sql.NullInt64{}
	at := func(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: true} }
	if got, err := store.ReadLeaseTimes(ctx, f.Reads, true); err != nil || got != (store.LeaseTimes{}) {
		t.Errorf("lease times of an empty database: %+v, %v; want none", got, err)
	}
	id := insertJobs(t, f, 6)
	set(t, f, id[0], `state = 'running', lease_until = 300`)
	set(t, f, id[1], `state = 'running', lease_until = 100`)
	set(t, f, id[2], `run_at = 500, queue = 'a'`)
	set(t, f, id[3], `run_at = 400, queue = 'b'`)
	set(t, f, id[4], `run_at = 50, queue = 'a', kind = 'other'`)
	set(t, f, id[5], `run_at = 10, queue = 'a', state = 'completed'`)
	if _, err := f.Reads.ExecContext(ctx, `INSERT INTO litequeue_paused (scope, name, since) VALUES ('queue', 'c', 0)`); err != nil {
		t.Fatal(err)
	}
	want := store.LeaseTimes{Earliest: at(100), Latest: at(300), Paused: true}
	if got, err := store.ReadLeaseTimes(ctx, f.Reads, true); err != nil || got != want {
		t.Errorf("lease times: %+v, %v; want %+v", got, err, want)
	}
	want.Paused = false
	if got, err := store.ReadLeaseTimes(ctx, f.Reads, false); err != nil || got != want {
		t.Errorf("lease times without flow control: %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct {
		kind           string
		queues, paused []string
		want           sql.NullInt64
	}{
		{"k", nil, nil, at(400)},
		{"k", []string{"a"}, nil, at(500)},
		{"k", nil, []string{"b"}, at(500)},
		{"k", []string{"a", "b"}, []string{"c"}, at(400)},
		{"k", []string{"b"}, []string{"b"}, null},
		{"other", nil, nil, at(50)},
		{"none", nil, nil, null},
	} {
		if got, err := store.NextPending(ctx, f.Reads, tc.kind, tc.queues, tc.paused); err != nil || got != tc.want {
			t.Errorf("next pending of %s on %v, paused %v: %v, %v; want %v", tc.kind, tc.queues, tc.paused, got, err, tc.want)
		}
	}
}
