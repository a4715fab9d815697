package litequeue

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// TestRescue_ManySightings: Work's rescue sees more expired leases than one
// batch holds. The sightings not yet confirmed do not take the room of the
// next ones, so every lease is seen within two looks, and all are rescued
// a confirmWait after that, not one batch per confirmWait.
func TestRescue_ManySightings(t *testing.T) {
	t.Parallel()
	const n, vt = rescueBatch + 44, DefaultVisibilityTimeout
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	q := openTemp(t, Options{Clock: clk})
	ctx := t.Context()
	if _, err := q.EnqueueMany(ctx, "k", make([]any, n)); err != nil {
		t.Fatal(err)
	}
	// A dead worker's leases, all ending now.
	_, err := q.st.reads.Exec(`UPDATE litequeue_jobs SET state = 'running', attempt = 1, token = 1,
		lease_until = ?, started_at = ?, worker = 'gone', max_tries = 3`, store.MS(clk.Now()), store.MS(clk.Now().Add(-vt)))
	if err != nil {
		t.Fatal(err)
	}
	var seen sightings
	rescue := func() int {
		got, err := q.rescue(ctx, &seen)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	total := rescue() // sees the first batch
	clk.Add(time.Second)
	total += rescue() // sees the rest
	clk.Add(confirmWait(vt) - time.Second)
	total += rescue() // the first batch is confirmed
	clk.Add(time.Second)
	total += rescue() // the rest
	if total != n {
		t.Fatalf("%d of %d expired leases rescued a confirmWait after the second look", total, n)
	}
}

// TestRescue_LockExpired: a lease the look saw expired is taken to be
// rescued only as the look saw it: not once it was renewed, settled, or
// rescued and claimed again in between (on a server, by another
// transaction that committed after the look read the row).
func TestRescue_LockExpired(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	ctx := t.Context()
	job, err := q.Enqueue(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		since string // what happened to the row after the look read it; "" nothing
		taken bool
	}{
		{"unchanged", ``, true},
		{"renewed", `UPDATE litequeue_jobs SET lease_until = lease_until + 30000 WHERE id = ?`, false},
		{"claimed again", `UPDATE litequeue_jobs SET token = token + 1 WHERE id = ?`, false},
		{"settled", `UPDATE litequeue_jobs SET state = 'completed', lease_until = 0 WHERE id = ?`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A dead worker's lease, which ended a second ago.
			if _, err := q.st.reads.Exec(`UPDATE litequeue_jobs SET state = 'running', attempt = 1, token = 1,
				lease_until = ?, started_at = ? WHERE id = ?`, store.MS(time.Now().Add(-time.Second)), store.MS(time.Now()), job.ID); err != nil {
				t.Fatal(err)
			}
			var seen store.JobRow
			if err := q.st.reads.Get(&seen, `SELECT `+store.JobColumns+` FROM litequeue_jobs WHERE id = ?`, job.ID); err != nil {
				t.Fatal(err)
			}
			if tc.since != "" {
				if _, err := q.st.reads.Exec(tc.since, job.ID); err != nil {
					t.Fatal(err)
				}
			}
			var got *store.JobRow
			if err := q.st.write(ctx, func(tx store.Execer) (err error) {
				got, err = lockExpired(ctx, tx, &seen)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if taken := got != nil; taken != tc.taken {
				t.Fatalf("lease taken to be rescued: %v, want %v", taken, tc.taken)
			}
			if got != nil && (got.Token != seen.Token || got.LeaseUntil != seen.LeaseUntil) {
				t.Errorf("took token %d until %d, want the lease as seen: token %d until %d", got.Token, got.LeaseUntil, seen.Token, seen.LeaseUntil)
			}
		})
	}
}
