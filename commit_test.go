package litequeue

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestWriter_BatchIsolatesFailures commits a batch in which one write fails
// after writing: its row is rolled back alone, the others commit, and each
// caller gets its own result.
func TestWriter_BatchIsolatesFailures(t *testing.T) {
	q, err := Open(filepath.Join(t.TempDir(), "w.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	if _, err := q.DB().Exec(`CREATE TABLE t (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	runs := map[string]int{}
	write := func(v string, fail bool) *writeOp {
		return &writeOp{ctx: ctx, done: make(chan bool, 1), fn: func(tx execer) error {
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
	batch := []*writeOp{write("a", false), write("b", true), write("c", false)}
	q.w.commit(batch)
	for i, want := range []error{nil, boom, nil} {
		if !errors.Is(batch[i].err, want) {
			t.Errorf("write %d: err %v, want %v", i, batch[i].err, want)
		}
	}
	var got []string
	if err := q.DB().Select(&got, `SELECT v FROM t ORDER BY v`); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("rows %v, want [a c]: the failed write's row must be rolled back alone", got)
	}
	if runs["a"] != 2 || runs["b"] != 2 {
		t.Errorf("runs %v: want each write run twice (plain, then isolated)", runs)
	}

	lone := []*writeOp{write("d", true)}
	q.w.commit(lone)
	if !errors.Is(lone[0].err, boom) || runs["d"] != 1 {
		t.Fatalf("lone failing write: err %v, runs %d; want boom, run once", lone[0].err, runs["d"])
	}
}
