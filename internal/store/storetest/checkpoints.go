package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// testCheckpoints: SetCheckpoint writes a running job's checkpoint while
// its lease holds, replacing the one before, byte for byte, and reports
// false, writing nothing, under a stale token, for a job of another
// created_at, or one no longer running; JobsCheckpoints reads those of
// many jobs at once; DeleteCheckpoint, DeleteJob and DeleteFinished
// delete them.
func testCheckpoints(t *testing.T, f *Fixture) {
	ctx := t.Context()
	ids := insertJobs(t, f, 3)
	claimed := make([]*store.JobRow, len(ids))
	for i, id := range ids {
		claimed[i] = running(t, f, id, 7)
	}
	save := func(row *store.JobRow, cp string) (held bool) {
		t.Helper()
		write(t, f, func(tx store.Execer) (err error) {
			held, err = store.SetCheckpoint(ctx, tx, row, []byte(cp))
			return err
		})
		return held
	}
	stale, other := *claimed[0], *claimed[0]
	stale.Token, other.CreatedAt = 6, other.CreatedAt+1
	got := []bool{save(claimed[0], "1"), save(claimed[0], "\xff\x002"), save(&stale, "stale"), save(&other, "other"),
		save(claimed[1], "b")}
	set(t, f, ids[2], `state = 'completed'`)
	got = append(got, save(claimed[2], "done"))
	if diff := cmp.Diff([]bool{true, true, false, false, true, false}, got); diff != "" {
		t.Errorf("SetCheckpoint held (-want +got):\n%s", diff)
	}
	var byID map[int64][]byte
	read := func() {
		t.Helper()
		var err error
		if byID, err = store.JobsCheckpoints(ctx, f.Reads, ids); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if diff := cmp.Diff(map[int64][]byte{ids[0]: []byte("\xff\x002"), ids[1]: []byte("b")}, byID); diff != "" {
		t.Errorf("JobsCheckpoints (-want +got):\n%s", diff)
	}
	if cp, err := store.JobCheckpoint(ctx, f.Reads, ids[2]); cp != nil || err != nil {
		t.Errorf("JobCheckpoint of a job without one = %q, %v", cp, err)
	}
	save(claimed[2], "x") // not running: refused
	write(t, f, func(tx store.Execer) error { return store.DeleteCheckpoint(ctx, tx, ids[0]) })
	set(t, f, ids[1], `state = 'completed', finished_at = 100`)
	write(t, f, func(tx store.Execer) error {
		_, err := store.DeleteFinished(ctx, tx, ids[1:2], []string{"completed"}, 100, 100)
		return err
	})
	read()
	if len(byID) != 0 {
		t.Errorf("checkpoints %v left after DeleteCheckpoint and DeleteFinished", byID)
	}
	running(t, f, ids[2], 8)
	save(&store.JobRow{ID: ids[2], Token: 8, CreatedAt: claimed[2].CreatedAt}, "c")
	write(t, f, func(tx store.Execer) error { return store.DeleteJob(ctx, tx, ids[2], 1) })
	if cp, err := store.JobCheckpoint(ctx, f.Reads, ids[2]); cp != nil || err != nil {
		t.Errorf("checkpoint of a deleted job = %q, %v", cp, err)
	}
}

// testClaimCheckpoints: a claim returns the checkpoints of the jobs it
// leased that have one, and nothing of the jobs it read but left.
func testClaimCheckpoints(t *testing.T, f *Fixture) {
	ids := insertJobs(t, f, 4)
	for _, id := range ids[:3] {
		if _, err := f.Reads.ExecContext(t.Context(), `INSERT INTO litequeue_checkpoints (job_id, checkpoint) VALUES (?, ?)`,
			id, []byte{byte(id), 0xff}); err != nil {
			t.Fatal(err)
		}
	}
	var got map[int64][]byte
	err := f.Write(t.Context(), func(tx store.Execer) (err error) {
		got, err = f.Engine.Claim(t.Context(), tx, store.ClaimQuery{Kinds: []string{"k"}, Limit: 10, Now: time.UnixMilli(1 << 40)},
			func(r *store.JobRow) bool {
				if r.ID == ids[0] {
					return false // left pending
				}
				r.State, r.Attempt, r.Token, r.LeaseUntil, r.StartedAt, r.Worker = "running", 1, r.Token+1, 10_000, 1, "w"
				return true
			})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64][]byte{ids[1]: {byte(ids[1]), 0xff}, ids[2]: {byte(ids[2]), 0xff}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checkpoints of the claim (-want +got):\n%s", diff)
	}
}
