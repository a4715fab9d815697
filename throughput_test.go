package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// throughputAt returns the points of q's Throughput over window per step,
// failing the test on error.
func throughputAt(t *testing.T, q *litequeue.Queue, window, step time.Duration) []litequeue.ThroughputPoint {
	t.Helper()
	points, err := q.Throughput(t.Context(), window, step)
	if err != nil {
		t.Fatal(err)
	}
	return points
}

// emptyPoints returns n points of step, the last one starting at last,
// with no ends: what Throughput returns of a quiet window.
func emptyPoints(n int, step time.Duration, last time.Time) []litequeue.ThroughputPoint {
	points := make([]litequeue.ThroughputPoint, n)
	for i := range points {
		points[i].Start = last.Add(-time.Duration(n-1-i) * step)
	}
	return points
}

// TestQueue_Throughput ends jobs every way a job ends, over minutes of the
// mock clock, and reads them back per minute over the last hour and per
// hour over the last day: every span present, the ends in theirs.
func TestQueue_Throughput(t *testing.T) {
	t.Parallel()
	clk := newMock() // epoch is on a whole hour
	q, _ := openQueue(t, litequeue.Options{Clock: clk,
		Retry: litequeue.Policy{Backoff: litequeue.Constant, Base: time.Minute, Ceiling: time.Minute, MaxTries: 2}})
	q.Handle("ok", ok)
	q.Handle("fail", func(context.Context, *litequeue.Job) error { return errors.New("boom") })
	q.Handle("discard", func(context.Context, *litequeue.Job) error { return litequeue.ErrDiscard })
	q.Handle("snooze", func(context.Context, *litequeue.Job) error { return litequeue.Snooze(time.Hour) })
	q.Handle("stop", func(ctx context.Context, job *litequeue.Job) error {
		if err := q.Cancel(ctx, job.ID); err != nil { // cancelled while it runs
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	})
	for _, kind := range []string{"ok", "ok", "fail", "discard", "snooze", "stop"} {
		enqueue(t, q, kind, nil)
	}
	if err := q.Cancel(t.Context(), enqueue(t, q, "nobody", nil).ID); err != nil { // cancelled before it ran
		t.Fatal(err)
	}
	expiring := enqueue(t, q, "nobody", nil, litequeue.ExpireAfter(time.Minute))
	runDue(t, q) // at 12:00: completed 2, retried 1, discarded 1, cancelled 2, the snooze nothing
	clk.Add(3*time.Minute + 20*time.Second)
	runDue(t, q) // at 12:03: the failed job's last try dead, the unstarted job expired
	if got := get(t, q, expiring.ID); got.State != litequeue.Expired {
		t.Fatalf("job with an expiry: %s, want expired", got.State)
	}
	clk.Add(7 * time.Minute) // now 12:10:20

	minutes := emptyPoints(60, time.Minute, epoch.Add(10*time.Minute))
	minutes[49] = litequeue.ThroughputPoint{Start: epoch, Completed: 2, Retried: 1, Discarded: 1, Cancelled: 2}
	minutes[52] = litequeue.ThroughputPoint{Start: epoch.Add(3 * time.Minute), Dead: 1, Expired: 1}
	if diff := cmp.Diff(minutes, throughputAt(t, q, time.Hour, time.Minute), cmp.Comparer(time.Time.Equal)); diff != "" {
		t.Errorf("the last hour per minute (-want +got):\n%s", diff)
	}
	hours := emptyPoints(24, time.Hour, epoch)
	hours[23] = litequeue.ThroughputPoint{Start: epoch, Completed: 2, Retried: 1, Dead: 1, Discarded: 1, Cancelled: 2, Expired: 1}
	if diff := cmp.Diff(hours, throughputAt(t, q, 24*time.Hour, time.Hour), cmp.Comparer(time.Time.Equal)); diff != "" {
		t.Errorf("the last day per hour (-want +got):\n%s", diff)
	}
}

// TestQueue_ThroughputRefused: a step that is not a whole number of
// minutes, a window over a day or not a whole number of steps is refused
// with an error that names the value and the limit.
func TestQueue_ThroughputRefused(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for _, tc := range []struct {
		window, step time.Duration
		want         []string
	}{
		{time.Hour, 30 * time.Second, []string{"step 30s", "whole number of minutes"}},
		{time.Hour, 90 * time.Second, []string{"step 1m30s"}},
		{25 * time.Hour, time.Hour, []string{"window 25h0m0s", "24h0m0s"}},
		{90 * time.Minute, time.Hour, []string{"window 1h30m0s", "steps of 1h0m0s"}},
		{0, time.Minute, []string{"window 0s"}},
	} {
		_, err := q.Throughput(t.Context(), tc.window, tc.step)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Throughput(%v, %v) = %v, want an error with %q", tc.window, tc.step, err, w)
			}
		}
	}
}

// TestQueue_ThroughputCountsEachEndOnce: a run that CompleteTx completed
// counts once, as completed, whatever its handler returns after; a run
// whose lease expired while its handler was stalled counts the rescue's
// failure, and its handler's late return counts nothing.
func TestQueue_ThroughputCountsEachEndOnce(t *testing.T) {
	t.Parallel()
	t.Run("CompleteTx", func(t *testing.T) {
		t.Parallel()
		q, _ := openQueue(t, litequeue.Options{})
		q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
			if err := completeInAppTx(ctx, q, job); err != nil {
				return err
			}
			return errors.New("late")
		})
		enqueue(t, q, "k", nil)
		runDue(t, q)
		points := emptyPoints(1, time.Minute, epoch)
		points[0].Completed = 1
		if diff := cmp.Diff(points, throughputAt(t, q, time.Minute, time.Minute), cmp.Comparer(time.Time.Equal)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("lost lease", func(t *testing.T) {
		t.Parallel()
		h := stallHolder(t, litequeue.Options{VisibilityTimeout: time.Minute})
		h.clk2.Add(2 * time.Minute)
		if _, err := h.q2.RunDue(t.Context()); err != nil { // rescues the job: retried
			t.Fatal(err)
		}
		if r := h.release(); r.err != nil {
			t.Fatal(r.err)
		}
		got := throughputAt(t, h.q2, time.Hour, time.Hour)
		want := emptyPoints(1, time.Hour, epoch)
		want[0].Retried = 1
		if diff := cmp.Diff(want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestQueue_ThroughputPurged: the janitor deletes the counts of minutes
// older than 25 hours, and keeps the newer ones.
func TestQueue_ThroughputPurged(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("ok", ok)
	enqueue(t, q, "ok", nil)
	runDue(t, q) // counted at epoch
	clk.Add(2 * time.Hour)
	enqueue(t, q, "ok", nil)
	runDue(t, q) // counted at epoch+2h
	minutes := func() []int64 {
		t.Helper()
		var got []int64
		if err := q.DB().Select(&got, `SELECT minute FROM litequeue_throughput ORDER BY minute`); err != nil {
			t.Fatal(err)
		}
		return got
	}
	clk.Add(25 * time.Hour) // epoch+2h is 25h ago: kept
	runDue(t, q)
	if diff := cmp.Diff([]int64{epoch.Add(2 * time.Hour).UnixMilli()}, minutes()); diff != "" {
		t.Errorf("minutes counted after the sweep (-want +got):\n%s", diff)
	}
	clk.Add(time.Minute)
	runDue(t, q)
	if got := minutes(); len(got) != 0 {
		t.Errorf("minutes counted after the sweep a minute later: %v, want none", got)
	}
}

// TestOpenReadOnly_Throughput: a Queue opened read-only reads the counts
// of a file that has them, and, on a file without the table (one that a
// binary before it left, which OpenReadOnly does not migrate), returns
// every point of the window, zero, without an error.
func TestOpenReadOnly_Throughput(t *testing.T) {
	t.Parallel()
	fileOnly(t, "OpenReadOnly opens a file")
	for _, dropped := range []bool{false, true} {
		q, path := openQueue(t, litequeue.Options{})
		q.Handle("ok", ok)
		enqueue(t, q, "ok", nil)
		runDue(t, q)
		if dropped {
			if _, err := q.DB().Exec(`DROP TABLE litequeue_throughput`); err != nil {
				t.Fatal(err)
			}
		}
		q.Close()
		ro, err := litequeue.OpenReadOnly(path, litequeue.Options{Clock: newMock()})
		if err != nil {
			t.Fatal(err)
		}
		points := throughputAt(t, ro, 24*time.Hour, time.Hour)
		ro.Close()
		completed := 0
		for _, p := range points {
			completed += p.Completed
		}
		if want := map[bool]int{false: 1, true: 0}[dropped]; len(points) != 24 || completed != want {
			t.Errorf("table dropped %v: %d points, %d completed; want 24 points, %d completed", dropped, len(points), completed, want)
		}
	}
}

// checkCountsMatchHistory checks that the throughput's counts, every
// minute and shard added up, are what q's history records: a completion
// per completed run, a retry per failed run after which its job was
// pending again, a death per run after which it was dead, and so on
// (a cancel of a job that was not running, which adds no history row,
// must not be among them). Processes killed at any moment must leave
// them equal: an end is counted in the transaction that stores it.
func checkCountsMatchHistory(t *testing.T, q *litequeue.Queue) {
	t.Helper()
	read := func(query string) map[string]int {
		t.Helper()
		var rows []struct {
			Outcome string `db:"outcome"`
			N       int    `db:"n"`
		}
		if err := q.DB().Select(&rows, query); err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		for _, r := range rows {
			m[r.Outcome] = r.N
		}
		return m
	}
	counted := read(`SELECT outcome, CAST(SUM(n) AS BIGINT) AS n FROM litequeue_throughput GROUP BY outcome`)
	recorded := read(`SELECT CASE WHEN next_state = 'pending' THEN 'retried' ELSE next_state END AS outcome, COUNT(*) AS n
		FROM litequeue_attempts
		WHERE next_state IN ('completed', 'dead', 'discarded', 'cancelled', 'expired')
			OR (next_state = 'pending' AND outcome IN ('failed', 'panicked', 'timed_out', 'lease_expired'))
		GROUP BY 1`)
	if diff := cmp.Diff(recorded, counted); diff != "" {
		t.Errorf("throughput counts against the history (-history +counts):\n%s", diff)
	}
}
