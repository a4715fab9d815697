package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_Claim checks that the claim reads the claim index in the
// order it needs and stops at its LIMIT, instead of sorting every due job
// each time, and that its UPDATE looks its rows up by ID: a job queue's
// hot path must not slow down as its backlog grows. SQLite, without
// statistics, picks plans by rules; this catches a change of schema or
// query that makes it sort.
func TestQueryPlans_Claim(t *testing.T) {
	t.Parallel()
	db := openTemp(t, Config{}).Info().Reads
	for query, args := range map[string][]any{
		claimSQL + claimOrderSQL:                       {0, 0, []string{"a", "b"}, 1},
		claimSQL + ` AND queue IN (?)` + claimOrderSQL: {0, 0, []string{"a", "b"}, []string{"q"}, 1},
		claimUpdateSQL:                                 {0, 0, "w", "[[1,1,1,3,0]]"},
	} {
		p := storetest.PlanOf(t, db, query, args...)
		if strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("query sorts every match instead of reading an index in order:\n%s\nplan: %s", query, p)
		}
		if query == claimUpdateSQL && !strings.Contains(p, "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY") {
			t.Errorf("the claim's update does not look its rows up by id:\n%s\nplan: %s", query, p)
		}
	}
}

// TestQueryPlans_NoEphemeralPerRow checks that the engine's statements
// that a job's life writes build no ephemeral table (see the store's test
// of the same name).
func TestQueryPlans_NoEphemeralPerRow(t *testing.T) {
	t.Parallel()
	db := openTemp(t, Config{}).Info().Reads
	for name, query := range map[string]string{
		"insert a job": insertJobSQL,
		"insert jobs":  insertJobsSQL,
	} {
		if ops := storetest.OpcodesOf(t, db, query); slices.Contains(ops, "OpenEphemeral") {
			t.Errorf("%s builds an ephemeral table:\n%s\nprogram: %s", name, query, strings.Join(ops, " "))
		}
	}
}

// TestEngine_WriterHoldsNotifiers checks that a watch's notifier is off
// the file while a Writer on the engine is in a transaction, and on again
// once the write returned (see notifiers); that the app's write
// transaction (WriteTx), which takes the engine's lock but begins its own
// transaction, leaves it on; and that the notifier leaves the list when
// its watch closes.
func TestEngine_WriterHoldsNotifiers(t *testing.T) {
	t.Parallel()
	if !fileNotifications {
		t.Skip("no file notifications here")
	}
	e := openTemp(t, Config{})
	info := e.Info()
	conn, err := store.NewConn(t.Context(), info.Writes, info.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w := &store.Writer[struct{}]{Conn: conn, Engine: e, Wake: func() {}}
	watch, err := e.Watch(store.NewWaker(func() {}, nil))
	if err != nil {
		t.Fatal(err)
	}
	listed := func() []*notifier {
		e.notifiers.mu.Lock()
		defer e.notifiers.mu.Unlock()
		return slices.Clone(e.notifiers.all)
	}
	all := listed()
	if len(all) != 1 {
		t.Fatalf("%d notifiers listed, want 1", len(all))
	}
	n := all[0]
	watching := func() int { return watches(t, n) }
	waitWatching(t, n, 1)
	inside := -1
	if err := w.Do(&store.Op[struct{}]{Ctx: t.Context(), Fn: func(store.Execer) error { inside = watching(); return nil }}); err != nil {
		t.Fatal(err)
	}
	if inside != 0 {
		t.Errorf("the notifier watches %d paths in the writer's transaction, want 0", inside)
	}
	if got := watching(); got != 1 {
		t.Errorf("the notifier watches %d paths after the write, want 1", got)
	}
	if err := e.Lock(); err != nil {
		t.Fatal(err)
	}
	tx, err := info.App.BeginTxx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	inside = watching()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	e.Unlock()
	if inside != 1 {
		t.Errorf("the notifier watches %d paths in the app's transaction, want 1", inside)
	}
	if err := watch.Close(); err != nil {
		t.Fatal(err)
	}
	if all := listed(); len(all) != 0 {
		t.Errorf("%d notifiers listed after the watch closed, want 0", len(all))
	}
}

// BenchmarkWatch_Changed measures the ask of data_version with which a
// Work loop begins each look, under a context that can end, as Work's.
func BenchmarkWatch_Changed(b *testing.B) {
	e := openTemp(b, Config{})
	e.SetWatch(false, 0)
	w, err := e.Watch(store.NewWaker(func() {}, nil))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Changed(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEngine_Suite runs the suite every engine passes, on new files.
func TestEngine_Suite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) *storetest.Fixture {
		return storetest.NewFixture(t, openTemp(t, Config{}))
	})
}
