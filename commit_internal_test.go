package litequeue

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// TestWriter_BatchIsolatesFailures commits a batch in which one write fails
// after writing: its row is rolled back alone, the others commit, and each
// caller gets its own result.
func TestWriter_BatchIsolatesFailures(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	ctx := t.Context()
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

// TestWriter_WakeAtCommit checks that the writer wakes the Queue's loops
// after a commit that a write in it asked for (wakeAtCommit), and not for
// a write that failed and was rolled back alone, in its savepoint.
func TestWriter_WakeAtCommit(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	ctx := t.Context()
	var wakes int
	q.w.wake = func() { wakes++ } // commit runs on this goroutine
	boom := errors.New("boom")
	write := func(wake, fail bool) *writeOp {
		return &writeOp{ctx: ctx, done: make(chan bool, 1), fn: func(execer) error {
			if wake {
				q.w.wakeAtCommit()
			}
			if fail {
				return boom
			}
			return nil
		}}
	}
	for _, tt := range []struct {
		name  string
		batch []*writeOp
		want  int
	}{
		{"asked", []*writeOp{write(false, false), write(true, false)}, 1},
		{"asked by a write kept beside a failed one", []*writeOp{write(true, false), write(false, true)}, 1},
		{"asked by the failed write only", []*writeOp{write(false, false), write(true, true)}, 0},
		{"not asked", []*writeOp{write(false, false)}, 0},
	} {
		wakes = 0
		q.w.commit(tt.batch)
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
		q := openTemp(t, Options{Synchronous: sync})
		ctx := t.Context()
		level := func(light ...bool) int { // the level a batch of such writes ran at
			var got int
			var batch []*writeOp
			for i, l := range light {
				op := &writeOp{ctx: ctx, light: l, done: make(chan bool, 1), fn: func(tx execer) error { return nil }}
				if i == 0 {
					op.fn = func(tx execer) error { return tx.GetContext(ctx, &got, `PRAGMA synchronous`) }
				}
				batch = append(batch, op)
			}
			q.w.commit(batch)
			for _, op := range batch {
				if op.err != nil {
					t.Fatal(op.err)
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

// TestWriter_JoinPanics: a panic in the claim that rides a run's commit —
// an Options.Rand that panics, drawn for the chained job's retry delay —
// is that commit's error, not an unwound leader: the Queue goes on.
func TestWriter_JoinPanics(t *testing.T) {
	t.Parallel()
	var draws atomic.Int64
	rnd := func() float64 {
		if draws.Add(1) == 2 { // the second job's, claimed with the first's completion
			panic("bad rand")
		}
		return 0.5
	}
	q := openTemp(t, Options{Clock: clock.NewMock(), Rand: rnd})
	q.Handle("k", func(context.Context, *Job) error { return nil })
	for range 2 {
		if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.RunDue(t.Context()) // its error is the panic's; what counts is that it returns
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunDue did not return after the panic in the chained claim")
	}
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatalf("Enqueue after the panic: %v", err)
	}
}
