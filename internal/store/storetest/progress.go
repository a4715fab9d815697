package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// testProgress: SetProgress writes a running job's progress while its
// lease holds, replacing the one before, and reports false, writing
// nothing, under a stale token; JobsProgress reads many at once; DeleteJob
// deletes it with the job.
func testProgress(t *testing.T, f *Fixture) {
	ctx := t.Context()
	ids := insertJobs(t, f, 2)
	claimed := running(t, f, ids[0], 7)
	stale := *claimed
	stale.Token = 6
	save := func(row *store.JobRow, done int64) (held bool) {
		t.Helper()
		write(t, f, func(tx store.Execer) (err error) {
			held, err = store.SetProgress(ctx, tx, row, store.ProgressRow{Done: done, Total: 10, At: 100 + done})
			return err
		})
		return held
	}
	if got := []bool{save(claimed, 1), save(claimed, 2), save(&stale, 9)}; !cmp.Equal([]bool{true, true, false}, got) {
		t.Errorf("SetProgress held %v, want true, true, false", got)
	}
	byID, err := store.JobsProgress(ctx, f.Reads, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]store.ProgressRow{ids[0]: {JobID: ids[0], Done: 2, Total: 10, At: 102}}
	if diff := cmp.Diff(want, byID); diff != "" {
		t.Errorf("JobsProgress (-want +got):\n%s", diff)
	}
	write(t, f, func(tx store.Execer) error { return store.DeleteJob(ctx, tx, ids[0], 1) })
	if byID, err = store.JobsProgress(ctx, f.Reads, ids); err != nil || len(byID) != 0 {
		t.Errorf("progress %v left after DeleteJob (%v)", byID, err)
	}
}
