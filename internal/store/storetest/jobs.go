package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of the reads and writes of inspection and of the
// operator's acts: a job by ID or key, lists by filter and cursor,
// deletes, cancel requests, dead jobs.

// putJob inserts one job of queue and kind, due at once, then writes its
// row as set makes it (state, attempt, RunAt, FinishedAt, last error:
// what store.SetRow writes), and returns its ID.
func putJob(t *testing.T, f *Fixture, queue, kind string, set func(*store.JobRow)) int64 {
	t.Helper()
	ctx := t.Context()
	var id int64
	err := f.Write(ctx, func(tx store.Execer) error {
		ids, err := f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: queue, Kind: kind, Payloads: [][]byte{nil}, MaxTries: 3})
		if err != nil {
			return err
		}
		id = ids[0]
		row, err := store.LockJob(ctx, tx, id)
		if err != nil || set == nil {
			return err
		}
		set(row)
		return store.SetRow(ctx, tx, row)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// finished is a set of putJob that ends the job in state at finishedAt,
// with the last error text.
func finished(state string, finishedAt int64, text string) func(*store.JobRow) {
	return func(r *store.JobRow) {
		r.State, r.FinishedAt, r.LastError = state, store.NullMS(store.FromMS(finishedAt)), text
		r.RunAt.Valid = false
	}
}

// inState is a set of putJob that puts the job in state, due at runAt.
func inState(state string, runAt int64) func(*store.JobRow) {
	return func(r *store.JobRow) { r.State, r.RunAt = state, store.NullMS(store.FromMS(runAt)) }
}

// testListJobs: ListJobs reads the jobs of a filter — state, queue, kind,
// ID bounds, error text (ASCII letters in either case, its % and _ as
// written) — in ID order either way, up to its limit; JobIDs reads their
// IDs and CountJobs counts them.
func testListJobs(t *testing.T, f *Fixture) {
	ctx := t.Context()
	ids := []int64{
		putJob(t, f, "q1", "k1", nil),
		putJob(t, f, "q1", "k2", finished("dead", 10, "Dial TCP: 50% refused_x")),
		putJob(t, f, "q2", "k1", finished("dead", 20, "other")),
		putJob(t, f, "q2", "k1", finished("completed", 30, "")),
		putJob(t, f, "q1", "k1", inState("running", 0)),
		putJob(t, f, "q1", "k1", finished("cancelled", 40, "")),
	}
	pick := func(i ...int) []int64 {
		out := []int64{}
		for _, n := range i {
			out = append(out, ids[n])
		}
		return out
	}
	for _, tc := range []struct {
		f    store.JobFilter
		want []int64
	}{
		{store.JobFilter{}, pick(0, 1, 2, 3, 4, 5)},
		{store.JobFilter{Desc: true}, pick(5, 4, 3, 2, 1, 0)},
		{store.JobFilter{State: "dead"}, pick(1, 2)},
		{store.JobFilter{State: "dead", Queue: "q2"}, pick(2)},
		{store.JobFilter{State: "pending"}, pick(0)},
		{store.JobFilter{State: "running", Desc: true}, pick(4)},
		{store.JobFilter{State: "completed"}, pick(3)},
		{store.JobFilter{State: "cancelled", Desc: true}, pick(5)},
		{store.JobFilter{Kind: "k1", Limit: 2}, pick(0, 2)},
		{store.JobFilter{Kind: "k1", Desc: true, Limit: 2}, pick(5, 4)},
		{store.JobFilter{After: ids[1], Before: ids[4]}, pick(2, 3)},
		{store.JobFilter{Before: ids[4], Desc: true, Limit: 2}, pick(3, 2)},
		{store.JobFilter{ErrorContains: "dial tcp: 50%"}, pick(1)},
		{store.JobFilter{ErrorContains: "%"}, pick(1)},
		{store.JobFilter{ErrorContains: "50_"}, pick()},
		{store.JobFilter{ErrorContains: "D_X"}, pick(1)},
	} {
		rows, err := store.ListJobs(ctx, f.Reads, store.JobColumns, tc.f)
		if err != nil {
			t.Fatalf("ListJobs(%+v): %v", tc.f, err)
		}
		got := []int64{}
		for _, r := range rows {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListJobs(%+v) = %v, want %v", tc.f, got, tc.want)
		}
		if got, err := store.JobIDs(ctx, f.Reads, tc.f); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("JobIDs(%+v) = %v, %v; want %v", tc.f, got, err, tc.want)
		}
		if n, err := store.CountJobs(ctx, f.Reads, tc.f); err != nil || n != len(tc.want) {
			t.Errorf("CountJobs(%+v) = %d, %v; want %d", tc.f, n, err, len(tc.want))
		}
	}
}

// testJobByID: JobByID and LockJob read a job's row as written, and
// report ErrNoRows for an ID that names no job; LiveByKey reads the
// pending or running job that holds a unique key, and none once it has
// finished.
func testJobByID(t *testing.T, f *Fixture) {
	ctx := t.Context()
	id := putJob(t, f, "q", "k", finished("dead", 10, "boom"))
	row, err := store.JobByID(ctx, f.Reads, store.JobColumns, id)
	if err != nil || row.ID != id || row.State != "dead" || row.LastError != "boom" || row.FinishedAt.Int64 != 10 {
		t.Errorf("JobByID(%d) = %+v, %v; want the dead job", id, row, err)
	}
	if _, err := store.JobByID(ctx, f.Reads, store.JobColumns, id+1); !errors.Is(err, store.ErrNoRows) {
		t.Errorf("JobByID of a missing job: %v, want ErrNoRows", err)
	}
	var ids []int64
	err = f.Write(ctx, func(tx store.Execer) error {
		ids, err = f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q", Kind: "k", Payloads: [][]byte{nil}, MaxTries: 3, UniqueKey: "u"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = f.Write(ctx, func(tx store.Execer) error {
		if _, err := store.LockJob(ctx, tx, ids[0]+1); !errors.Is(err, store.ErrNoRows) {
			t.Errorf("LockJob of a missing job: %v, want ErrNoRows", err)
		}
		live, err := store.LiveByKey(ctx, tx, "u")
		if err != nil || live == nil || live.ID != ids[0] {
			return fmt.Errorf("LiveByKey(u) = %+v, %v; want job %d", live, err, ids[0])
		}
		finished("completed", 20, "")(live)
		return store.SetRow(ctx, tx, live)
	})
	if err != nil {
		t.Fatal(err)
	}
	f.Write(ctx, func(tx store.Execer) error {
		if live, err := store.LiveByKey(ctx, tx, "u"); live != nil || err != nil {
			t.Errorf("LiveByKey(u) of a completed job = %+v, %v; want none", live, err)
		}
		return nil
	})
}

// testDeleteJob: DeleteJob deletes the job and its history, nothing of
// another job, and no later job gets its ID.
func testDeleteJob(t *testing.T, f *Fixture) {
	ctx := t.Context()
	keep := putJob(t, f, "q", "k", finished("completed", 10, ""))
	gone := putJob(t, f, "q", "k", finished("dead", 10, "boom"))
	history := func(id int64) *store.HistoryRow {
		return &store.HistoryRow{AttemptRow: store.AttemptRow{Attempt: 1, Outcome: "failed"}, JobID: id, Kind: "k", Next: "dead"}
	}
	err := f.Write(ctx, func(tx store.Execer) error {
		if err := store.AddHistory(ctx, tx, []*store.HistoryRow{history(keep), history(gone)}); err != nil {
			return err
		}
		return store.DeleteJob(ctx, tx, gone, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.JobByID(ctx, f.Reads, store.JobColumns, gone); !errors.Is(err, store.ErrNoRows) {
		t.Errorf("the deleted job is read: %v", err)
	}
	for id, want := range map[int64]int{keep: 1, gone: 0} {
		if rows, err := store.History(ctx, f.Reads, id); err != nil || len(rows) != want {
			t.Errorf("job %d has %d history rows, %v; want %d", id, len(rows), err, want)
		}
	}
	if _, err := store.JobByID(ctx, f.Reads, store.JobColumns, keep); err != nil {
		t.Errorf("the other job: %v", err)
	}
	if next := putJob(t, f, "q", "k", nil); next <= gone {
		t.Errorf("a job inserted after job %d was deleted got ID %d", gone, next)
	}
}

// testRequestCancel: RequestCancel marks a running job, and leaves a job
// in any other state as it is.
func testRequestCancel(t *testing.T, f *Fixture) {
	ctx := t.Context()
	running := putJob(t, f, "q", "k", inState("running", 0))
	pending := putJob(t, f, "q", "k", nil)
	err := f.Write(ctx, func(tx store.Execer) error {
		if err := store.RequestCancel(ctx, tx, running); err != nil {
			return err
		}
		return store.RequestCancel(ctx, tx, pending)
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]bool{running: true, pending: false} {
		row, err := store.JobByID(ctx, f.Reads, store.JobColumns, id)
		if err != nil || row.Cancel != want {
			t.Errorf("job %d (%s): cancel %v, %v; want %v", id, row.State, row.Cancel, err, want)
		}
	}
}

// testDeadJobs: DeadJobs reads those of the given jobs that are dead, in
// ID order; TallyDead counts the dead jobs that died by a cutoff, with the
// highest ID among them, and DeadUpTo lists those up to an ID.
func testDeadJobs(t *testing.T, f *Fixture) {
	ctx := t.Context()
	late := putJob(t, f, "q", "k", finished("dead", 30, "late"))
	pending := putJob(t, f, "q", "k", nil)
	early := putJob(t, f, "q", "k", finished("dead", 10, "early"))
	putJob(t, f, "q", "k", finished("completed", 10, ""))
	var got []int64
	err := f.Write(ctx, func(tx store.Execer) error {
		rows, err := store.DeadJobs(ctx, tx, []int64{early, pending, late, early + 100})
		for _, r := range rows {
			got = append(got, r.ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{late, early}; !slices.Equal(got, want) {
		t.Errorf("DeadJobs = %v, want %v", got, want)
	}
	for cutoff, want := range map[int64]struct {
		n   int
		max int64
	}{9: {0, 0}, 10: {1, early}, 29: {1, early}, 30: {2, early}} {
		if n, maxID, err := store.TallyDead(ctx, f.Reads, cutoff); err != nil || n != want.n || maxID != want.max {
			t.Errorf("TallyDead(%d) = %d, %d, %v; want %d, %d", cutoff, n, maxID, err, want.n, want.max)
		}
	}
	found, err := store.DeadUpTo(ctx, f.Reads, 30, late)
	if err != nil || len(found) != 1 || found[0].ID != late {
		t.Errorf("DeadUpTo(30, %d) = %+v, %v; want job %d alone", late, found, err, late)
	}
}
