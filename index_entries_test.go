package litequeue_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// jobIndex is a secondary index of the jobs or history table, with its
// condition ("" for none).
type jobIndex struct {
	Name  string `db:"name"`
	Table string `db:"tbl"`
	Def   string `db:"def"`
}

// jobIndexes reads the secondary indexes of litequeue_jobs and
// litequeue_attempts from the catalog: not the primary keys (on a file,
// the table itself; on a server, an index with an entry per row version
// written).
func jobIndexes(t *testing.T, db *sqlx.DB) []jobIndex {
	t.Helper()
	query := `SELECT name, tbl_name AS tbl, sql AS def FROM sqlite_schema
		WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('litequeue_jobs', 'litequeue_attempts') ORDER BY name`
	if onPostgres {
		query = `SELECT indexname AS name, tablename AS tbl, indexdef AS def FROM pg_indexes
			WHERE schemaname = current_schema() AND tablename IN ('litequeue_jobs', 'litequeue_attempts')
			AND indexname NOT LIKE '%_pkey' ORDER BY indexname`
	}
	var out []jobIndex
	if err := db.Select(&out, query); err != nil {
		t.Fatal(err)
	}
	return out
}

// whereClause finds the WHERE of an index's definition.
var whereClause = regexp.MustCompile(`\sWHERE\s`)

// holds reports whether the index has an entry for the job's row, or,
// of the history, how many for its rows.
func (x jobIndex) holds(t *testing.T, db *sqlx.DB, id int64) int {
	t.Helper()
	cond := "TRUE"
	if loc := whereClause.FindStringIndex(x.Def); loc != nil {
		cond = x.Def[loc[1]:]
	}
	col := "id"
	if x.Table == "litequeue_attempts" {
		col = "job_id"
	}
	var n int
	if err := db.Get(&n, db.Rebind(fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE %s = ? AND (%s)`, x.Table, col, cond)), id); err != nil {
		t.Fatalf("%s: %v", x.Name, err)
	}
	return n
}

// TestIndexEntries_PerJob counts the secondary index entries that a job
// writes in its life, enqueued, run and completed: of each index of the
// jobs and history tables, from its condition, whether the job's row (or
// its history rows) is in it when pending, while running and once
// completed; an entry is written where the row enters an index, and
// deleted where it leaves one. (A server writes an entry in every index
// whose condition a row version holds at each update that changes an
// indexed column, as every step of a job's life does, which counts the
// same; it deletes none until it vacuums.) Issue 33's target: at most 4
// entries written per job, where version 5 wrote 6 (litequeue_jobs_next
// and litequeue_attempts_recent besides) and deleted 3.
func TestIndexEntries_PerJob(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	db := q.DB()
	indexes := jobIndexes(t, db)
	const jobs = 5
	var mu sync.Mutex
	stages := map[int64][][]int{} // job → stage (none, pending, running, completed) → index → entries
	snap := func(id int64) []int {
		out := make([]int, len(indexes))
		for i, x := range indexes {
			out[i] = x.holds(t, db, id)
		}
		return out
	}
	q.Handle("counted", func(ctx context.Context, job *litequeue.Job) error {
		s := snap(job.ID)
		mu.Lock()
		stages[job.ID] = append(stages[job.ID], s)
		mu.Unlock()
		return nil
	})
	for range jobs {
		id := enqueue(t, q, "counted", nil).ID
		stages[id] = [][]int{make([]int, len(indexes)), snap(id)}
	}
	if n, err := q.RunDue(t.Context()); err != nil || n != jobs {
		t.Fatalf("RunDue: %d, %v; want %d", n, err, jobs)
	}
	written, deleted := make([]int, len(indexes)), make([]int, len(indexes))
	for id, s := range stages {
		s = append(s, snap(id))
		if len(s) != 4 {
			t.Fatalf("job %d: %d stages, want 4", id, len(s))
		}
		for i := range indexes {
			for k := 1; k < len(s); k++ {
				written[i] += max(s[k][i]-s[k-1][i], 0)
				deleted[i] += max(s[k-1][i]-s[k][i], 0)
			}
		}
	}
	var w, d int
	for i, x := range indexes {
		if written[i]+deleted[i] > 0 {
			t.Logf("%s: %.1f written, %.1f deleted per job", x.Name, float64(written[i])/jobs, float64(deleted[i])/jobs)
		}
		w, d = w+written[i], d+deleted[i]
	}
	t.Logf("in all: %.1f index entries written, %.1f deleted per job", float64(w)/jobs, float64(d)/jobs)
	if w > 4*jobs {
		t.Errorf("%.1f index entries written per job, want at most 4", float64(w)/jobs)
	}
}
