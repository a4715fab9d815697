package storetest

import (
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of job outputs: written by the settle with the ends
// whose fence holds, deleted with their jobs.

// testSetHeldRowsOutputs: SetHeldRows writes the output of each end whose
// fence held, replacing one the job had, byte for byte; an end whose
// fence did not hold, or with no output, writes none. DeleteJob and
// DeleteFinished delete a job's output with it.
func testSetHeldRowsOutputs(t *testing.T, f *Fixture) {
	ctx := t.Context()
	ids := insertJobs(t, f, 4)
	claimed := make([]*store.JobRow, len(ids))
	for i, id := range ids {
		claimed[i] = running(t, f, id, 7)
	}
	write(t, f, func(tx store.Execer) error { return store.SetOutput(ctx, tx, ids[0], []byte("old")) })
	done := func(c *store.JobRow, output []byte) store.HeldRow {
		after := *c
		after.State, after.LeaseUntil = "completed", 0
		after.FinishedAt = store.NullMS(store.FromMS(3000))
		return store.HeldRow{Claimed: c, After: &after, Output: output}
	}
	stale := *claimed[2]
	stale.Token = 6
	rows := []store.HeldRow{
		done(claimed[0], []byte{0xff, 0x00, 'x'}),
		done(claimed[1], nil),
		done(&stale, []byte("stale")),
		done(claimed[3], []byte(`{"n":1}`)),
	}
	checkHeld(t, f, rows, true, true, false, true)
	want := [][]byte{{0xff, 0x00, 'x'}, nil, nil, []byte(`{"n":1}`)}
	for i, id := range ids {
		if got := output(t, f, id); string(got) != string(want[i]) || (got == nil) != (want[i] == nil) {
			t.Errorf("job %d's output = %q, want %q", i, got, want[i])
		}
	}
	write(t, f, func(tx store.Execer) error { return store.DeleteJob(ctx, tx, ids[0], 1) })
	write(t, f, func(tx store.Execer) error {
		_, err := store.DeleteFinished(ctx, tx, ids[3:], []string{"completed"}, 3000, 3000)
		return err
	})
	for _, id := range []int64{ids[0], ids[3]} {
		if got := output(t, f, id); got != nil {
			t.Errorf("job %d deleted, its output %q left", id, got)
		}
	}
}

// write runs fn in a write transaction.
func write(t *testing.T, f *Fixture, fn func(tx store.Execer) error) {
	t.Helper()
	if err := f.Write(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// output reads a job's output.
func output(t *testing.T, f *Fixture, id int64) []byte {
	t.Helper()
	out, err := store.JobOutput(t.Context(), f.Reads, id)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
