package store_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestQueryPlans_PartialIndexes checks that the reads of jobs in one state
// use the partial index that holds that state, not every row: the
// stopped index for ListJobs of dead, discarded, cancelled and expired
// jobs (the CLI's dead list), the finished index for CountJobs of any
// terminal state and for the tally of a purge of dead jobs, the claim and lease indexes for
// pending and running jobs.
func TestQueryPlans_PartialIndexes(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	list := func(f store.JobFilter) (string, []any) { return f.Query(store.JobColumns, true) }
	count := func(f store.JobFilter) (string, []any) { return f.Query("id", false) }
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
		{"dead purge count", store.TallyDeadSQL, []any{0}, "litequeue_jobs_finished"},
	} {
		switch tc.name {
		case "list dead":
			tc.query, tc.args = list(store.JobFilter{State: "dead"})
		case "list cancelled on a queue":
			tc.query, tc.args = list(store.JobFilter{State: "cancelled", Queue: "q", Limit: 5})
		case "count completed":
			tc.query, tc.args = count(store.JobFilter{State: "completed"})
		case "count dead of a kind":
			tc.query, tc.args = count(store.JobFilter{State: "dead", Kind: "k", Limit: 10})
		case "list pending":
			tc.query, tc.args = list(store.JobFilter{State: "pending"})
		case "list running":
			tc.query, tc.args = list(store.JobFilter{State: "running"})
		}
		if p := storetest.PlanOf(t, db, tc.query, tc.args...); !strings.Contains(p, "INDEX "+tc.index) {
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
	db := openSchema(t)
	for _, f := range []store.JobFilter{
		{State: "dead", Desc: true, Limit: 100},
		{State: "dead", Desc: true, Before: 1000, Limit: 100},
		{State: "dead", After: 1000, Limit: 100},
		{State: "dead", Queue: "q", Kind: "k", ErrorContains: "refused", Desc: true, Limit: 100},
		{State: "expired", Desc: true, Limit: 100},
		{State: "completed", Desc: true, Limit: 100},
		{State: "completed", Desc: true, Before: 1000, Limit: 100},
		{State: "completed", Queue: "q", After: 1000, Limit: 100},
	} {
		query, args := f.Query(store.JobColumns, true)
		p := storetest.PlanOf(t, db, query, args...)
		reads := "INDEX litequeue_jobs_stopped"
		if f.State == "completed" {
			reads = "SCAN litequeue_jobs"
			if f.After > 0 || f.Before > 0 {
				reads = "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY"
			}
		}
		if !strings.Contains(p, reads) || strings.Contains(p, "TEMP B-TREE") ||
			(f.State == "completed" && strings.Contains(p, " INDEX ")) {
			t.Errorf("%+v: the plan does not read %q in order:\n%s\nplan: %s", f, reads, query, p)
		}
	}
}

// fillSQL writes n finished jobs straight into the table, one in every
// deadEvery of them dead and the others completed, as quickly as SQLite
// can: a benchmark's file of a million jobs.
const fillSQL = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
	INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, created_at, finished_at, last_error)
	SELECT 'default', 'email', '{}', CASE WHEN i % ? = 0 THEN 'dead' ELSE 'completed' END, 8, i, i,
	       CASE WHEN i % ? = 0 THEN 'dial tcp: connection refused' ELSE '' END
	FROM n`

// BenchmarkList_NewestDead lists the newest 100 dead jobs of a file of
// 1,000,000 jobs, then the page before them, where every job is dead and
// where one in a hundred is.
func BenchmarkList_NewestDead(b *testing.B) {
	const jobs = 1_000_000
	for _, deadEvery := range []int{1, 100} {
		b.Run("dead_1_in_"+strconv.Itoa(deadEvery), func(b *testing.B) {
			reads, app := openReads(b)
			if _, err := app.Exec(fillSQL, jobs, deadEvery, deadEvery); err != nil {
				b.Fatal(err)
			}
			listPages(b, reads, "dead")
		})
	}
}

// backlogSQL writes n pending jobs straight into the table, due at once.
const backlogSQL = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
	INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, created_at, run_at)
	SELECT 'default', 'email', '{}', 'pending', 8, i, i FROM n`

// BenchmarkList_NewestCompleted lists the newest 100 completed jobs of a
// file of 1,000,000, then the page before them, with no pending job newer
// than them and with a backlog of 100,000. Completed jobs are in no index
// in ID order (see litequeue_jobs_stopped in schema.sql): the page reads
// the table from its newest row, so a newer backlog is read through.
func BenchmarkList_NewestCompleted(b *testing.B) {
	const jobs = 1_000_000
	for _, backlog := range []int{0, 100_000} {
		b.Run("backlog_"+strconv.Itoa(backlog), func(b *testing.B) {
			reads, app := openReads(b)
			if _, err := app.Exec(fillSQL, jobs, jobs+1, jobs+1); err != nil {
				b.Fatal(err)
			}
			if backlog > 0 {
				if _, err := app.Exec(backlogSQL, backlog); err != nil {
					b.Fatal(err)
				}
			}
			listPages(b, reads, "completed")
		})
	}
}

// openReads opens the file engine on a new file (see openFile), and
// returns litequeue's read pool on it, as a Queue has it, and the app's
// pool for the benchmark's own writes.
func openReads(b *testing.B) (*store.Pool, *sqlx.DB) {
	w, app := openFile(b, "")
	reads := store.NewPool(w.Engine.Info().Reads, nil, nil)
	b.Cleanup(func() { reads.CloseStmts() })
	return reads, app
}

// listPages lists the newest 100 jobs in state, then the page before
// them, in each round, and reports the time per page.
func listPages(b *testing.B, reads *store.Pool, state string) {
	b.Helper()
	ctx := b.Context()
	for b.Loop() {
		page, err := store.ListJobs(ctx, reads, store.JobColumns, store.JobFilter{State: state, Desc: true, Limit: 100})
		if err != nil || len(page) != 100 {
			b.Fatalf("ListJobs = %d jobs, %v; want 100", len(page), err)
		}
		before := page[len(page)-1].ID
		if _, err := store.ListJobs(ctx, reads, store.JobColumns, store.JobFilter{State: state, Desc: true, Before: before, Limit: 100}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/2, "µs/page")
}
