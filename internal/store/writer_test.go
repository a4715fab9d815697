package store_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
)

// TestWriter_BatchIsolatesFailures commits a batch in which one write fails
// after writing: its row is rolled back alone, the others commit, and each
// caller gets its own result.
func TestWriter_BatchIsolatesFailures(t *testing.T) {
	t.Parallel()
	w, db := openFile(t, "")
	ctx := t.Context()
	if _, err := db.Exec(`CREATE TABLE t (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	runs := map[string]int{}
	write := func(v string, fail bool) *store.Op[struct{}] {
		return &store.Op[struct{}]{Ctx: ctx, Fn: func(tx store.Execer) error {
			runs[v]++
			if _, err := tx.ExecContext(ctx, `INSERT INTO t (v) VALUES (?)`, v); err != nil {
				return err
			}
			if fail {
				return boom
			}
			return nil
		}}
	}
	batch := []*store.Op[struct{}]{write("a", false), write("b", true), write("c", false)}
	w.Commit(batch)
	for i, want := range []error{nil, boom, nil} {
		if !errors.Is(batch[i].Err(), want) {
			t.Errorf("write %d: err %v, want %v", i, batch[i].Err(), want)
		}
	}
	var got []string
	if err := db.Select(&got, `SELECT v FROM t ORDER BY v`); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("rows %v, want [a c]: the failed write's row must be rolled back alone", got)
	}
	if runs["a"] != 2 || runs["b"] != 2 {
		t.Errorf("runs %v: want each write run twice (plain, then isolated)", runs)
	}

	lone := []*store.Op[struct{}]{write("d", true)}
	w.Commit(lone)
	if !errors.Is(lone[0].Err(), boom) || runs["d"] != 1 {
		t.Fatalf("lone failing write: err %v, runs %d; want boom, run once", lone[0].Err(), runs["d"])
	}
}

// TestWriter_WakeAtCommit checks that the writer wakes the Queue's loops
// after a commit that a write in it asked for (WakeAtCommit), and not for
// a write that failed and was rolled back alone, in its savepoint.
func TestWriter_WakeAtCommit(t *testing.T) {
	t.Parallel()
	w, _ := openFile(t, "")
	ctx := t.Context()
	var wakes int
	w.Wake = func() { wakes++ } // commit runs on this goroutine
	boom := errors.New("boom")
	write := func(wake, fail bool) *store.Op[struct{}] {
		return &store.Op[struct{}]{Ctx: ctx, Fn: func(store.Execer) error {
			if wake {
				w.WakeAtCommit()
			}
			if fail {
				return boom
			}
			return nil
		}}
	}
	for _, tt := range []struct {
		name  string
		batch []*store.Op[struct{}]
		want  int
	}{
		{"asked", []*store.Op[struct{}]{write(false, false), write(true, false)}, 1},
		{"asked by a write kept beside a failed one", []*store.Op[struct{}]{write(true, false), write(false, true)}, 1},
		{"asked by the failed write only", []*store.Op[struct{}]{write(false, false), write(true, true)}, 0},
		{"not asked", []*store.Op[struct{}]{write(false, false)}, 0},
	} {
		wakes = 0
		w.Commit(tt.batch)
		if wakes != tt.want {
			t.Errorf("%s: %d wakes, want %d", tt.name, wakes, tt.want)
		}
	}
}

// TestWriter_LightBatches: a batch of light writes (claims, renewals)
// commits with synchronous=NORMAL, without an fsync; any batch with a
// durable write in it, and every batch after, commits with FULL. With
// "normal" configured, the writer never touches the setting.
func TestWriter_LightBatches(t *testing.T) {
	t.Parallel()
	for _, sync := range []string{"full", "normal"} {
		w, _ := openFile(t, sync)
		ctx := t.Context()
		level := func(light ...bool) int { // the level a batch of such writes ran at
			var got int
			var batch []*store.Op[struct{}]
			for i, l := range light {
				op := &store.Op[struct{}]{Ctx: ctx, Light: l, Fn: func(tx store.Execer) error { return nil }}
				if i == 0 {
					op.Fn = func(tx store.Execer) error { return tx.GetContext(ctx, &got, `PRAGMA synchronous`) }
				}
				batch = append(batch, op)
			}
			w.Commit(batch)
			for _, op := range batch {
				if op.Err() != nil {
					t.Fatal(op.Err())
				}
			}
			return got
		}
		const normal, full = 1, 2
		want := []int{full, normal, normal, full, normal, full}
		if sync == "normal" {
			want = []int{normal, normal, normal, normal, normal, normal}
		}
		got := []int{level(false), level(true), level(true, true), level(true, false), level(true), level(false, false)}
		if !slices.Equal(got, want) {
			t.Errorf("synchronous %s: levels of the batches %v, want %v", sync, got, want)
		}
	}
}

// TestWriter_RedecidesInTheBatch settles a run end whose fence no longer
// holds (Cancel asked the run to stop): the settle asks the machinery to
// decide it again on the row as it is in the batch's own transaction,
// before the gate's bookkeeping and the chained claims, and stores its
// history row with the batch's, in one commit.
func TestWriter_RedecidesInTheBatch(t *testing.T) {
	t.Parallel()
	base, db := openFile(t, "")
	ctx := t.Context()
	res, err := db.Exec(`INSERT INTO litequeue_jobs (queue, kind, payload, state, attempt, max_tries, created_at, token, cancel)
		VALUES ('default', 'k', x'', 'running', 1, 3, 1000, 7, 1)`)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	s := &recordSteps{}
	w := &store.Writer[struct{}]{Conn: base.Conn, Engine: base.Engine, Wake: func() {}, Steps: s}
	claimed := store.JobRow{ID: id, Kind: "k", State: "running", Attempt: 1, CreatedAt: 1000, Token: 7}
	after := claimed
	after.State = "completed"
	end := &store.RunEnd[struct{}]{Claimed: &claimed, After: after, Gated: true, Next: true,
		History: &store.HistoryRow{AttemptRow: store.AttemptRow{Attempt: 1, Outcome: "completed"}, JobID: id, Kind: "k", Next: "completed"}}
	op := &store.Op[struct{}]{Ctx: ctx, End: end}
	w.Commit([]*store.Op[struct{}]{op})
	if op.Err() != nil {
		t.Fatal(op.Err())
	}
	if want := []string{"redecide", "ran", "claim"}; !slices.Equal(s.calls, want) {
		t.Errorf("steps %v, want %v: the end decided again in the batch, before the gate and the claims", s.calls, want)
	}
	if !end.Stored || end.After.State != "canceled" {
		t.Errorf("end stored %v as %q, want stored as canceled", end.Stored, end.After.State)
	}
	var state, outcomes string
	if err := db.Get(&state, `SELECT state FROM litequeue_jobs WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if err := db.Get(&outcomes, `SELECT coalesce(group_concat(outcome), '') FROM litequeue_attempts WHERE job_id = ?`, id); err != nil {
		t.Fatal(err)
	}
	if state != "canceled" || outcomes != "canceled" {
		t.Errorf("job %s with history %q, want canceled with one canceled row", state, outcomes)
	}
}

// recordSteps are the settle's steps of TestWriter_RedecidesInTheBatch:
// it records their calls, and decides every end it is asked to again as
// cancelled.
type recordSteps struct{ calls []string }

func (s *recordSteps) Redecide(ctx context.Context, tx store.Execer, e *store.RunEnd[struct{}]) (bool, error) {
	s.calls = append(s.calls, "redecide")
	row, err := store.LockJob(ctx, tx, e.Claimed.ID)
	if err != nil {
		return false, err
	}
	row.State = "canceled"
	if err := store.SetRow(ctx, tx, row); err != nil {
		return false, err
	}
	e.After = *row
	e.History = &store.HistoryRow{AttemptRow: store.AttemptRow{Attempt: row.Attempt, Outcome: "canceled"},
		JobID: row.ID, Kind: row.Kind, Next: "canceled"}
	return true, nil
}

func (s *recordSteps) Ran(context.Context, store.Execer, []*store.RunEnd[struct{}]) error {
	s.calls = append(s.calls, "ran")
	return nil
}

func (s *recordSteps) Claim(context.Context, store.Execer, []*store.RunEnd[struct{}]) error {
	s.calls = append(s.calls, "claim")
	return nil
}
