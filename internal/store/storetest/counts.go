package storetest

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of the kept counts of the jobs (store/counts.go).

// checkCounts fails the test unless the kept counts of the jobs equal a
// recount, and the figures read from them (KeptCountByState,
// KeptDueKinds) equal those of a scan of every job (CountByState,
// DueKinds) at now; step names the moment.
func checkCounts(t *testing.T, f *Fixture, step string, now int64) {
	t.Helper()
	ctx := t.Context()
	err := f.Reads.Snapshot(ctx, func(tx store.Execer) error {
		diffs, err := store.CheckCounts(ctx, tx)
		if err != nil {
			return err
		}
		if len(diffs) > 0 {
			t.Errorf("%s: the kept counts differ from a recount: %+v", step, diffs)
		}
		scanned, err := store.CountByState(ctx, tx, now)
		if err != nil {
			return err
		}
		kept, err := store.KeptCountByState(ctx, tx, now)
		if err != nil {
			return err
		}
		if got, want := stateCounts(kept), stateCounts(scanned); !slices.Equal(got, want) {
			t.Errorf("%s: KeptCountByState:\n got %q\nwant %q", step, got, want)
		}
		scannedKinds, err := store.DueKinds(ctx, tx, now)
		if err != nil {
			return err
		}
		keptKinds, err := store.KeptDueKinds(ctx, tx, now)
		if err != nil {
			return err
		}
		if !slices.Equal(keptKinds, scannedKinds) {
			t.Errorf("%s: KeptDueKinds = %q, DueKinds = %q", step, keptKinds, scannedKinds)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// stateCounts words the groups, sorted; the earliest RunAt only of a due
// group, the one the figures show.
func stateCounts(groups []store.StateCount) []string {
	var out []string
	for _, g := range groups {
		oldest := "-"
		if g.Due {
			oldest = strconv.FormatInt(g.Oldest.Int64, 10)
		}
		out = append(out, fmt.Sprintf("%s %s due=%v n=%d oldest=%s", g.Queue, g.State, g.Due, g.N, oldest))
	}
	slices.Sort(out)
	return out
}

// testKeptCounts: the kept counts equal a recount after every operation
// of the store that writes jobs — InsertJobs of one and of many, a claim
// that takes some of the rows it finds, SetHeldRows whose fences hold or
// not, SetRow, DeleteJob, DeleteFinished, InsertCopy, a transaction rolled
// back — and the figures read from them equal those of a scan.
func testKeptCounts(t *testing.T, f *Fixture) {
	ctx := t.Context()
	write := func(step string, fn func(tx store.Execer) error) {
		t.Helper()
		if err := f.Write(ctx, fn); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		checkCounts(t, f, step, 150)
	}
	checkCounts(t, f, "empty", 150)
	putJob(t, f, "q1", "k1", inState("pending", 100))
	putJob(t, f, "q1", "k1", inState("pending", 120))
	putJob(t, f, "q1", "k2", inState("pending", 200))
	putJob(t, f, "q1", "k1", finished("dead", 10, "boom"))
	putJob(t, f, "q2", "k3", inState("pending", 50))
	putJob(t, f, "q2", "k1", inState("pending", 300))
	checkCounts(t, f, "one at a time", 150)
	ids := insertJobs(t, f, 50) // queue q, kind k, pending at 0
	checkCounts(t, f, "fifty in one statement", 150)
	var claimed []*store.JobRow
	write("a claim of four of five", func(tx store.Execer) error {
		claimed = nil
		found := 0
		cq := store.ClaimQuery{Kinds: []string{"k", "k1"}, Limit: 5, Now: time.UnixMilli(150)}
		_, err := f.Engine.Claim(ctx, tx, cq, func(r *store.JobRow) bool {
			if found++; found == 2 {
				return false // as one of a kind at its limit
			}
			r.State, r.Attempt, r.Token, r.LeaseUntil, r.StartedAt, r.Worker = "running", 1, r.Token+1, 5000, 150, "w"
			c := *r
			claimed = append(claimed, &c)
			return true
		})
		return err
	})
	if len(claimed) != 4 {
		t.Fatalf("claimed %d jobs, want 4", len(claimed))
	}
	write("ends of many, one fence broken", func(tx store.Execer) error {
		var rows []store.HeldRow
		for i, state := range []string{"completed", "pending", "dead", "completed"} {
			after := *claimed[i]
			after.State, after.LeaseUntil = state, 0
			rows = append(rows, store.HeldRow{Claimed: claimed[i], After: &after})
		}
		stale := *claimed[3]
		stale.Token++
		rows[3].Claimed = &stale
		_, err := f.Engine.SetHeldRows(ctx, tx, rows)
		return err
	})
	write("a row set", func(tx store.Execer) error {
		after := *claimed[3]
		after.State, after.FinishedAt = "cancelled", store.NullMS(store.FromMS(100))
		return store.SetRow(ctx, tx, &after)
	})
	write("a row set of no job", func(tx store.Execer) error {
		return store.SetRow(ctx, tx, &store.JobRow{ID: -1, State: "dead"})
	})
	write("a job deleted", func(tx store.Execer) error { return store.DeleteJob(ctx, tx, ids[10], 1) })
	write("finished jobs deleted", func(tx store.Execer) error {
		_, err := store.DeleteFinished(ctx, tx, []int64{claimed[0].ID, claimed[2].ID, claimed[3].ID, ids[20]},
			[]string{"completed", "dead"}, 1<<40, 1<<40)
		return err
	})
	write("a copy", func(tx store.Execer) error {
		r := *claimed[3]
		r.Queue, r.Kind = "copied", "kc"
		_, err := store.InsertCopy(ctx, tx, &r)
		return err
	})
	rolledBack := errors.New("rolled back")
	err := f.Write(ctx, func(tx store.Execer) error {
		if _, err := f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q", Kind: "k", Payloads: make([][]byte, 7), MaxTries: 3}); err != nil {
			return err
		}
		if err := store.DeleteJob(ctx, tx, ids[30], 1); err != nil {
			return err
		}
		return rolledBack
	})
	if !errors.Is(err, rolledBack) {
		t.Fatalf("the write = %v, want it rolled back", err)
	}
	checkCounts(t, f, "a transaction rolled back", 150)
}

// testCountsOfOtherSQL: SQL of the app's own on litequeue_jobs — inserts,
// updates of state, queue and kind of many rows, one that changes none,
// deletes — is counted where the database keeps the counts itself
// (store.KeepsCounts: a server's triggers); elsewhere (a file) a recount
// finds each change that moved a count, and a repair mends it.
func testCountsOfOtherSQL(t *testing.T, f *Fixture) {
	ctx := t.Context()
	ids := insertJobs(t, f, 20) // queue q, kind k, pending at 0
	for _, c := range []struct {
		step  string
		moved bool // a count changes
		query string
		args  []any
	}{
		{"a claim of many", true, `UPDATE litequeue_jobs SET state = 'running' WHERE id IN (?, ?, ?, ?)`, []any{ids[0], ids[1], ids[2], ids[3]}},
		{"ends of many", true, `UPDATE litequeue_jobs SET state = CASE WHEN id = ? THEN 'completed' WHEN id = ? THEN 'pending' ELSE 'dead' END,
			finished_at = 100 WHERE state = 'running' AND queue = 'q'`, []any{ids[0], ids[1]}},
		{"a renewal, no change of state", false, `UPDATE litequeue_jobs SET lease_until = 9000 WHERE state = 'pending'`, nil},
		{"a move to another queue and kind", true, `UPDATE litequeue_jobs SET queue = 'q3', kind = 'k9' WHERE id IN (?, ?)`, []any{ids[10], ids[11]}},
		{"a move of the queue, state too", true, `UPDATE litequeue_jobs SET queue = 'q4', state = 'cancelled', finished_at = 1 WHERE id = ?`, []any{ids[12]}},
		{"a scheduled retry", false, `UPDATE litequeue_jobs SET run_at = 500 WHERE id IN (?, ?)`, []any{ids[14], ids[15]}},
		{"an insert", true, `INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, run_at, created_at)
			VALUES ('q', 'k', ?, 'pending', 3, 0, 0)`, []any{[]byte{}}},
		{"a delete of many", true, `DELETE FROM litequeue_jobs WHERE id IN (?, ?, ?, ?)`, []any{ids[0], ids[2], ids[16], ids[17]}},
		{"a delete of none", false, `DELETE FROM litequeue_jobs WHERE id = -1`, nil},
	} {
		if _, err := f.Reads.ExecContext(ctx, c.query, c.args...); err != nil {
			t.Fatalf("%s: %v", c.step, err)
		}
		diffs, err := store.CheckCounts(ctx, f.Reads)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(diffs) > 0, c.moved && !store.KeepsCounts(f.Reads); got != want {
			t.Errorf("%s: CheckCounts = %+v; want differences: %v", c.step, diffs, want)
		}
		if err := f.Write(ctx, func(tx store.Execer) error {
			repaired, err := store.RepairCounts(ctx, tx, f.Engine.Serial())
			if len(repaired) != len(diffs) {
				t.Errorf("%s: RepairCounts = %+v, want %+v", c.step, repaired, diffs)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, f, c.step, 150)
	}
}

// testRepairCounts: CheckCounts reports each group whose kept count
// differs from a recount (one too many, one missing, one of no job);
// RepairCounts rewrites them and returns the same groups, after which
// they hold, and a second repair finds nothing to do, also after an
// insert in its own transaction, whose count it sees.
func testRepairCounts(t *testing.T, f *Fixture) {
	ctx := t.Context()
	putJob(t, f, "q1", "k1", inState("pending", 100))
	putJob(t, f, "q1", "k1", inState("pending", 100))
	putJob(t, f, "q1", "k2", finished("dead", 10, "boom"))
	for _, q := range []string{
		`UPDATE litequeue_counts SET n = n + 5 WHERE queue = 'q1' AND kind = 'k1'`,
		`DELETE FROM litequeue_counts WHERE kind = 'k2'`,
		`INSERT INTO litequeue_counts (queue, kind, state, shard, n) VALUES ('q9', 'k9', 'running', 3, 2)`,
	} {
		if _, err := f.Reads.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	diffs, err := store.CheckCounts(ctx, f.Reads)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"q1 k1 pending: kept 7, counted 2", "q1 k2 dead: kept 0, counted 1", "q9 k9 running: kept 2, counted 0"}
	if got := diffWords(diffs); !slices.Equal(got, want) {
		t.Errorf("CheckCounts:\n got %q\nwant %q", got, want)
	}
	var repaired []store.CountDiff
	if err := f.Write(ctx, func(tx store.Execer) (err error) {
		repaired, err = store.RepairCounts(ctx, tx, f.Engine.Serial())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := diffWords(repaired); !slices.Equal(got, want) {
		t.Errorf("RepairCounts:\n got %q\nwant %q", got, want)
	}
	checkCounts(t, f, "repaired", 150)
	if err := f.Write(ctx, func(tx store.Execer) (err error) {
		repaired, err = store.RepairCounts(ctx, tx, f.Engine.Serial())
		return err
	}); err != nil || len(repaired) != 0 {
		t.Errorf("a second repair = %v, %v; want nothing to do", repaired, err)
	}
	if err := f.Write(ctx, func(tx store.Execer) (err error) {
		if _, err := f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q1", Kind: "k1", Payloads: make([][]byte, 3), MaxTries: 3}); err != nil {
			return err
		}
		repaired, err = store.RepairCounts(ctx, tx, f.Engine.Serial())
		return err
	}); err != nil || len(repaired) != 0 {
		t.Errorf("a repair after an insert in one transaction = %v, %v; want nothing to do", repaired, err)
	}
	checkCounts(t, f, "a repair after an insert in one transaction", 150)
}

// diffWords words the differences, sorted.
func diffWords(diffs []store.CountDiff) []string {
	var out []string
	for _, d := range diffs {
		out = append(out, fmt.Sprintf("%s %s %s: kept %d, counted %d", d.Queue, d.Kind, d.State, d.Kept, d.N))
	}
	slices.Sort(out)
	return out
}

// testCountsBesideWriters: two writers (two processes' on a file, which
// take turns; side by side on a server) that insert, move and delete jobs
// at once leave the kept counts equal to a recount, and a repair run
// meanwhile loses none of their changes.
func testCountsBesideWriters(t *testing.T, f *Fixture) {
	ctx := t.Context()
	writers := []*store.Writer[struct{}]{f.Writer, f.OtherWriter(t)}
	var wg sync.WaitGroup
	errs := make(chan error, len(writers)+1)
	for i, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				errs <- w.Do(&store.Op[struct{}]{Ctx: ctx, Fn: func(tx store.Execer) error {
					kind := "k" + strconv.Itoa(i)
					ids, err := f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q", Kind: kind, Payloads: make([][]byte, 3), MaxTries: 3})
					if err != nil {
						return err
					}
					row, err := store.LockJob(ctx, tx, ids[0])
					if err != nil {
						return err
					}
					row.State = "running"
					if err := store.SetRow(ctx, tx, row); err != nil {
						return err
					}
					return store.DeleteJob(ctx, tx, ids[1], 1)
				}})
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		repairer := f.OtherWriter(t)
		for range 5 {
			errs <- repairer.Do(&store.Op[struct{}]{Ctx: ctx, Fn: func(tx store.Execer) error {
				_, err := store.RepairCounts(ctx, tx, f.Engine.Serial())
				return err
			}})
		}
	}()
	go func() { wg.Wait(); close(errs) }()
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkCounts(t, f, "after the writers", 150)
}

// testFoldCounts: on an engine whose writers run side by side, the jobs
// another session wrote are counted in its own shard, which FoldCounts
// moves into shard 0 once that session is gone, keeping every count; on
// one whose writers take turns there is one shard, and it does nothing.
func testFoldCounts(t *testing.T, f *Fixture) {
	ctx := t.Context()
	insertJobs(t, f, 3)
	info := f.Engine.Info()
	conn, err := info.App.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A job of another session: the app's own statement, which only a
	// database that keeps the counts itself counts.
	if _, err := conn.ExecContext(ctx, info.Dialect.SQL(`INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, run_at, created_at)
		VALUES ('q', 'k', ?, 'pending', 3, 0, 0)`), []byte{}); err != nil {
		t.Fatal(err)
	}
	if !store.KeepsCounts(f.Reads) {
		if err := f.Write(ctx, func(tx store.Execer) error {
			_, err := store.RepairCounts(ctx, tx, f.Engine.Serial())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(where string, args ...any) (n int) {
		t.Helper()
		if err := f.Reads.GetContext(ctx, &n, `SELECT COUNT(*) FROM litequeue_counts WHERE `+where, args...); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if f.Engine.Serial() {
		conn.Close()
		if got := rows("shard <> 0"); got != 0 {
			t.Errorf("%d rows of the counts outside shard 0 where the writers take turns, want none", got)
		}
	} else {
		pid := endSession(t, f, conn)
		if got := rows("shard = ?", pid); got != 1 {
			t.Errorf("%d rows of the counts in the shard of the session that wrote one job, want 1", got)
		}
		if err := store.FoldCounts(ctx, f.Engine, f.Write); err != nil {
			t.Fatal(err)
		}
		if got := rows("shard = ?", pid); got != 0 {
			t.Errorf("%d rows of the counts in the shard of the session gone after the fold, want 0", got)
		}
	}
	if err := store.FoldCounts(ctx, f.Engine, f.Write); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, f, "folded", 150)
}

// endSession closes conn, which ends its session on the server, and
// returns the session's pid once the server no longer lists it.
func endSession(t *testing.T, f *Fixture, conn *sqlx.Conn) (pid int) {
	t.Helper()
	ctx := t.Context()
	if err := conn.GetContext(ctx, &pid, `SELECT pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	conn.Raw(func(any) error { return driver.ErrBadConn }) // the pool closes it: the session ends
	conn.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var alive bool
		if err := f.Reads.GetContext(ctx, &alive, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ?)`, pid); err != nil {
			t.Fatal(err)
		}
		if !alive {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %d still listed 10s after its end", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling the server's list of sessions, not a schedule
	}
}
