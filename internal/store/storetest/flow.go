package storetest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue/internal/store"
)

// The suite's cases of flow control: pauses, the limits' counts, the
// breakers' rows.

// testPauses: a second pause keeps the first's since and reports no
// change; a resume reports whether there was a pause; Pauses lists the
// queues first, each scope by name.
func testPauses(t *testing.T, f *Fixture) {
	ctx := t.Context()
	var got []bool
	err := f.Write(ctx, func(tx store.Execer) error {
		got = got[:0]
		for _, p := range []struct {
			scope, name string
			since       int64
		}{{"kind", "b", 1}, {"queue", "z", 2}, {"kind", "a", 3}, {"kind", "b", 4}, {"queue", "y", 5}} {
			changed, err := store.Pause(ctx, tx, p.scope, p.name, p.since)
			if err != nil {
				return err
			}
			got = append(got, changed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]bool{true, true, true, false, true}, got); diff != "" {
		t.Errorf("pauses changed (-want +got):\n%s", diff)
	}
	rows, err := store.Pauses(ctx, f.Reads)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.PauseRow{
		{Scope: "queue", Name: "y", Since: 5}, {Scope: "queue", Name: "z", Since: 2},
		{Scope: "kind", Name: "a", Since: 3}, {Scope: "kind", Name: "b", Since: 1},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Pauses (-want +got):\n%s", diff)
	}
	for _, want := range []bool{true, false} {
		var resumed bool
		err := f.Write(ctx, func(tx store.Execer) (err error) {
			resumed, err = store.Resume(ctx, tx, "kind", "a")
			return err
		})
		if err != nil || resumed != want {
			t.Errorf("resume of kind a: %v, %v; want %v", resumed, err, want)
		}
	}
}

// testStarts: Starts counts a kind's starts in the window (from, to] and
// gives the n-th latest; PruneStarts drops those outside it.
func testStarts(t *testing.T, f *Fixture) {
	ctx := t.Context()
	err := f.Write(ctx, func(tx store.Execer) error {
		for _, at := range []int64{5, 10, 20, 30, 40} {
			if err := store.AddStart(ctx, tx, "k", at); err != nil {
				return err
			}
		}
		return store.AddStart(ctx, tx, "other", 30)
	})
	if err != nil {
		t.Fatal(err)
	}
	n, nth, err := store.Starts(ctx, f.Reads, "k", 10, 40, 2)
	if err != nil || n != 3 || !nth.Valid || nth.Int64 != 30 {
		t.Errorf("Starts of k in (10, 40], the 2nd latest: %d, %v, %v; want 3, 30", n, nth, err)
	}
	if _, nth, _ := store.Starts(ctx, f.Reads, "k", 10, 40, 4); nth.Valid {
		t.Errorf("the 4th latest of 3 starts: %v, want NULL", nth)
	}
	if err := f.Write(ctx, func(tx store.Execer) error { return store.PruneStarts(ctx, tx, "k", 10, 30) }); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := store.Starts(ctx, f.Reads, "k", 0, 100, 1); n != 2 {
		t.Errorf("after pruning k outside (10, 30]: %d starts, want 2", n)
	}
	if n, _, _ := store.Starts(ctx, f.Reads, "other", 0, 100, 1); n != 1 {
		t.Errorf("the pruning of k pruned another kind's starts: %d left, want 1", n)
	}
}

// openBreaker opens kind's breaker at at, for 100 ms, and reports whether
// OpenBreaker opened it.
func openBreaker(t *testing.T, f *Fixture, kind string, at int64) bool {
	t.Helper()
	ctx := t.Context()
	var opened bool
	err := f.Write(ctx, func(tx store.Execer) (err error) {
		opened, err = store.OpenBreaker(ctx, tx, kind, at, at+100, 100, 1000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return opened
}

// testBreakers: OpenBreaker opens a closed breaker without a row and
// leaves an open one as it is; Breaker reads a breaker's row, nil for a
// kind whose breaker never opened.
func testBreakers(t *testing.T, f *Fixture) {
	ctx := t.Context()
	if !openBreaker(t, f, "b", 1) || !openBreaker(t, f, "a", 2) || openBreaker(t, f, "b", 3) {
		t.Fatal("OpenBreaker: want b and a opened, and b not again")
	}
	r, err := store.Breaker(ctx, f.Reads, "b")
	if err != nil || r == nil || r.State != "open" || r.OpenedAt != 1 || r.Trips != 1 {
		t.Fatalf("breaker b after two opens: %+v, %v; want open at 1, one trip", r, err)
	}
	if r, _ := store.Breaker(ctx, f.Reads, "none"); r != nil {
		t.Errorf("the breaker of a kind that never opened: %+v, want nil", r)
	}
}

// testCloseBreaker: CloseBreaker closes an open breaker and reports
// whether it did; OpenBreakers lists those not closed by kind; a closed
// breaker, which has a row, opens again.
func testCloseBreaker(t *testing.T, f *Fixture) {
	ctx := t.Context()
	if !openBreaker(t, f, "b", 1) || !openBreaker(t, f, "a", 2) {
		t.Fatal("OpenBreaker: want b and a opened")
	}
	var closed bool
	err := f.Write(ctx, func(tx store.Execer) (err error) {
		closed, err = store.CloseBreaker(ctx, tx, "a", 50)
		return err
	})
	if err != nil || !closed {
		t.Fatalf("CloseBreaker of a: %v, %v", closed, err)
	}
	rows, err := store.OpenBreakers(ctx, f.Reads)
	if err != nil || len(rows) != 1 || rows[0].Kind != "b" {
		t.Errorf("OpenBreakers: %+v, %v; want b alone", rows, err)
	}
	if !openBreaker(t, f, "a", 60) {
		t.Error("a closed breaker with a row did not open again")
	}
}
