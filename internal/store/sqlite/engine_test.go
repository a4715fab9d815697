package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_Claim checks that the claim reads the claim index alone
// (no other index, no scan of the table): a probe per kind and priority
// with pending jobs, then of each the range of due jobs, in order, up to
// the limit, sorting only the rows of those ranges (none for one range),
// also in the one statement of a claim of more ranges than a compound
// SELECT takes; and that its UPDATE looks its rows up by ID: a job
// queue's hot path must not slow down as its backlog, due or scheduled,
// grows. SQLite, without statistics, picks plans by rules; this catches a
// change of schema or query that makes it scan or sort.
func TestQueryPlans_Claim(t *testing.T) {
	t.Parallel()
	db := openTemp(t, Config{}).Info().Reads
	db.MustExec(`INSERT INTO litequeue_jobs (queue, kind, payload, state, priority, max_tries, run_at, created_at)
		VALUES ('q', 'a', x'', 'pending', 0, 3, 0, 0), ('q', 'b', x'', 'pending', 0, 3, 0, 0), ('q', 'b', x'', 'pending', 5, 3, 0, 0)`)
	checkPlan := func(what, query string, args []any, steps ...string) {
		t.Helper()
		p := storetest.PlanOf(t, db, query, args...)
		for _, step := range steps {
			if !strings.Contains(p, step) {
				t.Errorf("%s: the plan has no step %q:\n%s\nplan: %s", what, step, query, p)
			}
		}
		if strings.Contains(p, "SCAN litequeue_jobs") {
			t.Errorf("%s: the plan scans the table:\n%s\nplan: %s", what, query, p)
		}
		parts := strings.Split(p, "; ")
		for i, part := range parts { // a sort of one range's rows, or at the end
			if strings.Contains(part, "TEMP B-TREE") && i < len(parts)-1 && (i == 0 || !strings.HasPrefix(parts[i-1], "SCAN (subquery-")) {
				t.Errorf("%s: the plan sorts more than its ranges' rows:\n%s\nplan: %s", what, query, p)
			}
		}
	}
	checkPlan("kinds and priorities", claimPairsSQL, []any{`["a","b"]`},
		"SEARCH litequeue_jobs USING COVERING INDEX litequeue_jobs_claim (kind=?)",
		"SEARCH litequeue_jobs USING COVERING INDEX litequeue_jobs_claim (kind=? AND priority<?)")
	const rangeStep = "SEARCH litequeue_jobs USING INDEX litequeue_jobs_claim (kind=? AND priority=? AND run_at<?)"
	for _, cq := range []store.ClaimQuery{
		{Kinds: []string{"a"}, Limit: 1},
		{Kinds: []string{"a", "b"}, Queues: []string{"q"}, Paused: []string{"p"}, Limit: 1},
	} {
		query, args, err := claimQuery(t.Context(), db, cq)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(fmt.Sprint(cq.Kinds), query, args, rangeStep)
		if len(cq.Kinds) == 1 && strings.Contains(storetest.PlanOf(t, db, query, args...), "TEMP B-TREE") {
			t.Errorf("one range: the plan sorts")
		}
	}
	checkPlan("one statement", claimAllSQL+claimAllEnd, []any{`["a","b"]`, 0, 0, 1, 1},
		rangeStep, "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY (rowid=?)")
	if p := storetest.PlanOf(t, db, claimUpdateSQL, 0, 0, "w", "[[1,1,1,3,0]]"); !strings.Contains(p, "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY") {
		t.Errorf("the claim's update does not look its rows up by id:\n%s\nplan: %s", claimUpdateSQL, p)
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
	w, watch := writerAndWatch(t, e)
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

// writerAndWatch returns a writer of e's and a watch of its file, the
// watch closed when the test ends unless the test closed it.
func writerAndWatch(t *testing.T, e *Engine) (*store.Writer[struct{}], store.Changes) {
	t.Helper()
	info := e.Info()
	conn, err := store.NewConn(t.Context(), info.Writes, info.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	watch, err := e.Watch(store.NewWaker(func() {}, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { watch.Close() })
	return &store.Writer[struct{}]{Conn: conn, Engine: e, Wake: func() {}}, watch
}

// TestEngine_OwnWritesIdle: a write of the Queue's own writer makes an
// idle loop look every store.PollInterval for afterRelease, in case another
// connection committed as the writer let go of the file, and then every
// notifiedPoll again — not for recentChange, as another process's commit
// does: Work's start, each heartbeat and each of the janitor's rounds
// write, and 30 s of looks each second after each kept an idle process
// from idling.
func TestEngine_OwnWritesIdle(t *testing.T) {
	t.Parallel()
	if !fileNotifications {
		t.Skip("no file notifications here")
	}
	e := openTemp(t, Config{})
	w, watch := writerAndWatch(t, e)
	write := func(ex store.Execer) error {
		_, err := ex.ExecContext(t.Context(), `INSERT INTO litequeue_meta (name, value) VALUES ('idle', 1)
			ON CONFLICT (name) DO UPDATE SET value = value + 1`)
		return err
	}
	if err := w.Do(&store.Op[struct{}]{Ctx: t.Context(), Fn: write}); err != nil {
		t.Fatal(err)
	}
	if got := watch.Poll(); got != store.PollInterval {
		t.Errorf("poll %v just after the writer let go of the file, want %v", got, store.PollInterval)
	}
	start := time.Now()
	waitFor(t, "the loop to poll every notifiedPoll again", func() bool { return watch.Poll() == notifiedPoll })
	if took := time.Since(start); took < afterRelease/2 {
		t.Errorf("the loop polled every notifiedPoll again %v after the write, want about %v", took, afterRelease)
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
