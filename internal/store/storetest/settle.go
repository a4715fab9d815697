package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of the settle of a batch of run ends: the fenced
// writes of the jobs' rows, and their history (testAddHistory).

// running puts the job in state running under lease token, and returns
// its row as claimed.
func running(t *testing.T, f *Fixture, id, token int64) *store.JobRow {
	t.Helper()
	set(t, f, id, `state = 'running', attempt = 1, token = ?, lease_until = 5000, cancel = 0`, token)
	row, err := store.JobByID(t.Context(), f.Reads, f.Engine.Info().JobColumns, id)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// testSetHeldRows: SetHeldRows writes, in one call, the row of each run
// end whose lease still holds — completed, retried with its error text
// (stored as a server's text can hold it), dead — and its history row,
// if it has one, and reports which held; it leaves alone, adding no
// history, and reports false for, a row claimed again under another token
// (also when the batch has the other token's end too, which it writes), a
// row whose cancel was asked, one no longer running, and one of another
// created_at (a job of the same ID, after a restore).
func testSetHeldRows(t *testing.T, f *Fixture) {
	ctx := t.Context()
	ids := insertJobs(t, f, 7)
	claimed := make([]*store.JobRow, len(ids))
	for i, id := range ids {
		claimed[i] = running(t, f, id, 7)
	}
	end := func(c *store.JobRow, state string, runAt, finishedAt int64, text string) store.HeldRow {
		after := *c
		after.State, after.Attempt, after.LastError = state, 2, text
		after.RunAt, after.FinishedAt = store.NullMS(store.FromMS(runAt)), store.NullMS(store.FromMS(finishedAt))
		after.RunAt.Valid, after.FinishedAt.Valid = runAt != 0, finishedAt != 0
		after.LeaseUntil, after.Cancel = 0, false
		h := &store.HistoryRow{AttemptRow: store.AttemptRow{Attempt: 1, StartedAt: 1000, FinishedAt: 3000,
			Outcome: "failed", Error: text, Worker: state}, JobID: c.ID, Kind: "k", Next: state}
		return store.HeldRow{Claimed: c, After: &after, History: h}
	}
	stale := func(c *store.JobRow, token, created int64) *store.JobRow {
		s := *c
		s.Token, s.CreatedAt = token, created
		return &s
	}
	set(t, f, ids[3], `cancel = 1`)
	set(t, f, ids[4], `state = 'completed'`)
	rows := []store.HeldRow{
		end(claimed[0], "completed", 0, 3000, ""),
		end(claimed[1], "pending", 9000, 0, "boom: \xff\x00 'quoted'"),
		end(stale(claimed[2], 6, claimed[2].CreatedAt), "dead", 0, 3000, "stale"),
		end(claimed[3], "completed", 0, 3000, ""),
		end(claimed[4], "dead", 0, 3000, "late"),
		end(stale(claimed[5], 7, claimed[5].CreatedAt+1), "completed", 0, 3000, ""),
		end(stale(claimed[6], 6, claimed[6].CreatedAt), "dead", 0, 3000, "lost"),
		end(claimed[6], "completed", 0, 4000, ""),
	}
	rows[0].History = nil // an end without a history row
	checkHeld(t, f, rows, true, true, false, false, false, false, false, true)
	want := []*store.JobRow{rows[0].After, rows[1].After, claimed[2], claimed[3], claimed[4], claimed[5], rows[7].After}
	want[1].LastError = storable(f, want[1].LastError)
	want[3].Cancel = true
	want[4].State = "completed"
	for i, id := range ids {
		got, err := store.JobByID(ctx, f.Reads, f.Engine.Info().JobColumns, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[i], got); diff != "" {
			t.Errorf("job %d (-want +got):\n%s", i, diff)
		}
	}
	wantHistory := map[int][]store.AttemptRow{1: {rows[1].History.AttemptRow}, 6: {rows[7].History.AttemptRow}}
	wantHistory[1][0].Error = storable(f, wantHistory[1][0].Error)
	for i, id := range ids {
		got, err := store.History(ctx, f.Reads, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantHistory[i], got); diff != "" {
			t.Errorf("job %d's history (-want +got):\n%s", i, diff)
		}
	}
}

// checkHeld runs SetHeldRows on rows in a write transaction and checks
// which fences it reports held.
func checkHeld(t *testing.T, f *Fixture, rows []store.HeldRow, want ...bool) {
	t.Helper()
	var held []bool
	err := f.Write(t.Context(), func(tx store.Execer) (err error) {
		held, err = f.Engine.SetHeldRows(t.Context(), tx, rows)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, held); diff != "" {
		t.Errorf("fences held (-want +got):\n%s", diff)
	}
}

// storable is text as the fixture's database stores it: a server's text
// holds neither NUL bytes nor invalid UTF-8.
func storable(f *Fixture, text string) string {
	if f.Engine.Info().Dialect != nil {
		return store.StorableText(text)
	}
	return text
}

// testSetHeldRowsRestored: of two ends in one batch for a job of one ID
// under one token — the run of the job before a restore gave the ID to a
// job of another created_at, and the run of the job after it — only the
// one whose created_at is the row's holds, and only it is reported held:
// the other's end, whose row was not written, must not be stored.
func testSetHeldRowsRestored(t *testing.T, f *Fixture) {
	ctx := t.Context()
	id := insertJob(t, f)
	now := running(t, f, id, 7)
	before := *now
	before.CreatedAt--
	after := func(c *store.JobRow, state string) store.HeldRow {
		a := *c
		a.State, a.Attempt, a.LeaseUntil = state, 2, 0
		a.FinishedAt = store.NullMS(store.FromMS(3000))
		h := &store.HistoryRow{AttemptRow: store.AttemptRow{Attempt: 1, StartedAt: 1000, FinishedAt: 3000,
			Outcome: state, Worker: state}, JobID: c.ID, Kind: "k", Next: state}
		return store.HeldRow{Claimed: c, After: &a, History: h}
	}
	rows := []store.HeldRow{after(&before, "dead"), after(now, "completed")}
	checkHeld(t, f, rows, false, true)
	got, err := store.JobByID(ctx, f.Reads, f.Engine.Info().JobColumns, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows[1].After, got); diff != "" {
		t.Errorf("job (-want +got):\n%s", diff)
	}
	history, err := store.History(ctx, f.Reads, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.AttemptRow{rows[1].History.AttemptRow}, history); diff != "" {
		t.Errorf("history: only the held end's (-want +got):\n%s", diff)
	}
}
