package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// moreJobsSQL inserts 3,000 jobs in every state, across three queues and
// five kinds, a third of the pending ones scheduled an hour after at.
func moreJobsSQL(at int64) string {
	return fmt.Sprintf(`INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, run_at, created_at, finished_at)
	SELECT 'q' || (x %% 3), 'k' || (x %% 5), '\x7b7d'::bytea,
		CASE x %% 7 WHEN 0 THEN 'completed' WHEN 1 THEN 'dead' WHEN 2 THEN 'running' WHEN 3 THEN 'cancelled' ELSE 'pending' END,
		8, %d + CASE WHEN x %% 3 = 0 THEN 3600000 ELSE -x END, %d, CASE WHEN x %% 7 IN (0, 1, 3) THEN %d END
	FROM generate_series(1, 3000) AS x`, at, at, at)
}

// TestOpen_UpgradeCounts upgrades tables of versions 5 and 6 with jobs
// in every state, and those of an upgrade killed after its steps: Open
// counts every job, its Stats equal those that a scan of the jobs finds
// (the counts' figures, taken apart by a recount, hold), and a writer that
// holds a transaction open on the jobs while the upgrade begins has its
// job counted too: the upgrade waits for it.
func TestOpen_UpgradeCounts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version int
		stepped bool
	}{{5, false}, {5, true}, {6, false}, {6, true}} {
		version, stepped := c.version, c.stepped
		dsn, _ := versionTables(t, version, stepped)
		clk := clock.NewMock()
		clk.Set(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
		admin := adminDB(t, dsn)
		if _, err := admin.Exec(moreJobsSQL(clk.Now().UnixMilli())); err != nil {
			t.Fatal(err)
		}
		holder, err := admin.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := holder.Exec(`INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, run_at, created_at)
			VALUES ('held', 'k', '\x'::bytea, 'pending', 8, 0, 0)`); err != nil {
			t.Fatal(err)
		}
		opened := make(chan *litequeue.Queue, 1)
		go func() { opened <- open(t, dsn, clk) }()
		waitFor(t, "the upgrade to wait for the jobs' lock", func() bool {
			var waiting bool
			err := admin.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity
				WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting)
			return err == nil && waiting
		})
		select {
		case <-opened:
			t.Fatalf("version %d, stepped %v: the upgrade did not wait for the transaction open on the jobs", version, stepped)
		default:
		}
		if err := holder.Commit(); err != nil {
			t.Fatal(err)
		}
		q := <-opened
		if changed, err := q.RecountJobs(t.Context()); err != nil || changed != 0 {
			t.Errorf("version %d, stepped %v: RecountJobs after the upgrade = %d, %v; want every count right", version, stepped, changed, err)
		}
		s, err := q.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]litequeue.QueueStats{
			"default": {Due: 1},
			"held":    {Due: 1, OldestDue: clk.Now().Sub(time.UnixMilli(0))},
		}
		for x := 1; x <= 3000; x++ {
			qs := want[fmt.Sprintf("q%d", x%3)]
			switch x % 7 {
			case 0:
				qs.Completed++
			case 1:
				qs.Dead++
			case 2:
				qs.Running++
			case 3:
				qs.Cancelled++
			default:
				if x%3 == 0 {
					qs.Scheduled++
				} else {
					qs.Due++
					qs.OldestDue = max(qs.OldestDue, time.Duration(x)*time.Millisecond)
				}
			}
			want[fmt.Sprintf("q%d", x%3)] = qs
		}
		want["default"] = litequeue.QueueStats{Due: 1, OldestDue: s.Queues["default"].OldestDue} // enqueued by versionTables' own clock
		if diff := cmp.Diff(want, s.Queues); diff != "" {
			t.Errorf("version %d, stepped %v: Stats after the upgrade (-want +got):\n%s", version, stepped, diff)
		}
	}
}
