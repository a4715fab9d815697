package store_test

import (
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
