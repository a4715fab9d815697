package litequeue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/jmoiron/sqlx"
)

// TestQueryPlans_HotPath checks that the queries run once per claim or per
// batch read an index in the order they need and stop at their LIMIT,
// instead of sorting every matching row each time: a job queue's hot path
// must not slow down as its backlog grows. SQLite, without statistics, picks
// plans by rules; this catches a change of schema or query that makes it
// sort.
func TestQueryPlans_HotPath(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	queries := map[string][]any{
		claimSQL + claimOrderSQL:                       {0, 0, []string{"a", "b"}, 1},
		claimSQL + ` AND queue IN (?)` + claimOrderSQL: {0, 0, []string{"a", "b"}, []string{"q"}, 1},
		claimUpdateSQL:                                 {0, 0, "w", "[[1,1,1,3,0]]"},
		dueExpirySQL:                                   {0, 10},
	}
	for query, args := range queries {
		p := planOf(t, q, query, args...)
		if strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("query sorts every match instead of reading an index in order:\n%s\nplan: %s", query, p)
		}
		if query == claimUpdateSQL && !strings.Contains(p, "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY") {
			t.Errorf("the claim's update does not look its rows up by id:\n%s\nplan: %s", query, p)
		}
	}
}

// TestQueryPlans_PartialIndexes checks that the reads of jobs in one state
// use the partial index that holds that state, not every row: the
// stopped index for List of dead, discarded, cancelled and expired jobs
// (the CLI's dead list), the finished index for retention and Count of
// any terminal state, the claim and lease indexes for pending and running
// jobs, the expiry index for pending jobs whose expiry has come.
func TestQueryPlans_PartialIndexes(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	list := func(f Filter) (string, []any) { return f.query(jobColumns, true) }
	count := func(f Filter) (string, []any) { return f.query("id", false) }
	for _, tc := range []struct {
		name  string
		query string
		args  []any
		index string
	}{
		{"list dead", "", nil, "litequeue_jobs_stopped"},
		{"list cancelled on a queue", "", nil, "litequeue_jobs_stopped"},
		{"count completed", "", nil, "litequeue_jobs_finished"},
		{"count dead of a kind", "", nil, "litequeue_jobs_finished"},
		{"list pending", "", nil, "litequeue_jobs_claim"},
		{"list running", "", nil, "litequeue_jobs_lease"},
		{"retention", expiredJobsSQL + purgeLimitSQL, []any{[]State{Completed, Discarded}, 0, 10}, "litequeue_jobs_finished"},
		{"retention by rule", expiredJobsSQL + " AND kind = ? AND NOT (queue = ? AND kind = ?)" + purgeLimitSQL,
			[]any{[]State{Completed, Discarded}, 0, "k", "q", "k", 10}, "litequeue_jobs_finished"},
		{"expiry", anyExpirySQL, []any{0}, "litequeue_jobs_expiry"},
		{"expiry before a claim", claimFirstSQL, []any{0}, "litequeue_jobs_expiry"},
		{"leases and pauses", nextLeaseSQL, nil, "litequeue_jobs_lease"},
		{"dead purge count", countDeadSQL, []any{0}, "litequeue_jobs_finished"},
		{"breaker's failures", breakerFailedSQL, []any{"k", 0}, "litequeue_attempts_breaker"},
	} {
		switch tc.name {
		case "list dead":
			tc.query, tc.args = list(Filter{State: Dead})
		case "list cancelled on a queue":
			tc.query, tc.args = list(Filter{State: Cancelled, Queue: "q", Limit: 5})
		case "count completed":
			tc.query, tc.args = count(Filter{State: Completed})
		case "count dead of a kind":
			tc.query, tc.args = count(Filter{State: Dead, Kind: "k", Limit: 10})
		case "list pending":
			tc.query, tc.args = list(Filter{State: Pending})
		case "list running":
			tc.query, tc.args = list(Filter{State: Running})
		}
		if p := planOf(t, q, tc.query, tc.args...); !strings.Contains(p, "INDEX "+tc.index) {
			t.Errorf("%s: the plan does not use %s:\n%s\nplan: %s", tc.name, tc.index, tc.query, p)
		}
	}
}

// TestQueryPlans_ListPages checks that a page of finished jobs, newest
// first or from a cursor, reads its rows in ID order and stops at its
// Limit: the newest 100 dead jobs of a million are as quick to list as of
// a hundred (BenchmarkList_NewestDead measures it). Dead, discarded,
// cancelled and expired jobs are read from litequeue_jobs_stopped;
// completed ones, in no index in ID order, from the table itself.
func TestQueryPlans_ListPages(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	for _, f := range []Filter{
		{State: Dead, Desc: true, Limit: 100},
		{State: Dead, Desc: true, Before: 1000, Limit: 100},
		{State: Dead, After: 1000, Limit: 100},
		{State: Dead, Queue: "q", Kind: "k", ErrorContains: "refused", Desc: true, Limit: 100},
		{State: Expired, Desc: true, Limit: 100},
		{State: Completed, Desc: true, Limit: 100},
		{State: Completed, Desc: true, Before: 1000, Limit: 100},
		{State: Completed, Queue: "q", After: 1000, Limit: 100},
	} {
		query, args := f.query(jobColumns, true)
		p := planOf(t, q, query, args...)
		reads := "INDEX litequeue_jobs_stopped"
		if f.State == Completed {
			reads = "SCAN litequeue_jobs"
			if f.After > 0 || f.Before > 0 {
				reads = "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY"
			}
		}
		if !strings.Contains(p, reads) || strings.Contains(p, "TEMP B-TREE") ||
			(f.State == Completed && strings.Contains(p, " INDEX ")) {
			t.Errorf("%+v: the plan does not read %q in order:\n%s\nplan: %s", f, reads, query, p)
		}
	}
}

// planOf returns SQLite's EXPLAIN QUERY PLAN of the query, its steps
// joined by "; ". (?) lists are expanded as sqlx.In does.
func planOf(t *testing.T, q *Queue, query string, args ...any) string {
	t.Helper()
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := q.db.QueryxContext(t.Context(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestQueryPlans_NoEphemeralPerRow checks that the statements a job's
// life writes, once or more per job, build no ephemeral table. A partial
// index whose condition was "outcome IN (…)" of four values had each
// history row's insert build one, to test the row against the list:
// 13.4 µs a row against 7.8 for the same condition as ORs (see failedSQL).
// The claim's UPDATE … FROM json_each builds one per statement, for the
// join, and is not here.
func TestQueryPlans_NoEphemeralPerRow(t *testing.T) {
	t.Parallel()
	q := openTemp(t, Options{})
	for name, query := range map[string]string{
		"insert a job":      insertJobSQL,
		"insert jobs":       insertJobsSQL,
		"settle a run":      settleHeldSQL,
		"store a decision":  settleSQL,
		"add a history row": insertAttemptSQL,
		"add history rows":  addHistorySQL,
	} {
		if ops := opcodesOf(t, q, query); slices.Contains(ops, "OpenEphemeral") {
			t.Errorf("%s builds an ephemeral table:\n%s\nprogram: %s", name, query, strings.Join(ops, " "))
		}
	}
}

// opcodesOf returns the opcodes of the program SQLite compiles query to.
func opcodesOf(t *testing.T, q *Queue, query string) []string {
	t.Helper()
	args := make([]any, strings.Count(query, "?"))
	rows, err := q.db.QueryxContext(t.Context(), `EXPLAIN `+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var ops []string
	for rows.Next() {
		m := map[string]any{}
		if err := rows.MapScan(m); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, fmt.Sprint(m["opcode"]))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestSQLite_WriterHoldsNotifiers checks that a Work loop's notifier is
// off the file while the Queue's writer is in a transaction, and on again
// once the write returned (see notifiers); that the app's WriteTx, which
// begins its own transaction, leaves it on; and that the notifier leaves
// the list when its Work ends.
func TestSQLite_WriterHoldsNotifiers(t *testing.T) {
	t.Parallel()
	if !fileNotifications {
		t.Skip("no file notifications here")
	}
	q := openTemp(t, Options{Clock: clock.NewMock()})
	q.Handle("k", func(context.Context, *Job) error { return nil })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, WorkerOptions{}) }()
	e := q.eng.(*sqliteEngine)
	listed := func() []*notifier {
		e.notifiers.mu.Lock()
		defer e.notifiers.mu.Unlock()
		return slices.Clone(e.notifiers.all)
	}
	var n *notifier
	waitFor(t, "the Work loop's notifier to be listed", func() bool {
		if all := listed(); len(all) == 1 {
			n = all[0]
		}
		return n != nil
	})
	watching := func() int { return watches(t, n) }
	waitWatching(t, n, 1)
	inside := -1
	if err := q.write(t.Context(), func(execer) error { inside = watching(); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside != 0 {
		t.Errorf("the notifier watches %d paths in the writer's transaction, want 0", inside)
	}
	if got := watching(); got != 1 {
		t.Errorf("the notifier watches %d paths after the write, want 1", got)
	}
	if err := q.WriteTx(t.Context(), func(*sqlx.Tx) error { inside = watching(); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside != 1 {
		t.Errorf("the notifier watches %d paths in the app's WriteTx, want 1", inside)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if all := listed(); len(all) != 0 {
		t.Errorf("%d notifiers listed after Work ended, want 0", len(all))
	}
}

// BenchmarkWatch_Changed measures the ask of data_version with which a
// Work loop begins each look, under a context that can end, as Work's.
func BenchmarkWatch_Changed(b *testing.B) {
	q := openTemp(b, Options{})
	e := q.eng.(*sqliteEngine)
	e.notifyOff = true
	w, err := e.watch(newWaker(func() {}, nil))
	if err != nil {
		b.Fatal(err)
	}
	defer w.close()
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.changed(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
