package litequeue

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
)

// TestQueryPlans checks that the queries run once per claim or per batch
// read an index in the order they need and stop at their LIMIT, instead of
// sorting every matching row each time: a job queue's hot path must not
// slow down as its backlog grows. SQLite, without statistics, picks plans
// by rules; this catches a change of schema or query that makes it sort.
func TestQueryPlans(t *testing.T) {
	q, err := Open(filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	queries := map[string][]any{
		claimSQL + claimOrderSQL:                       {0, []string{"a", "b"}, 1},
		claimSQL + ` AND queue IN (?)` + claimOrderSQL: {0, []string{"a", "b"}, []string{"q"}, 1},
		claimUpdateSQL:                                 {0, 0, "w", "[[1,1,1,3,0]]"},
	}
	for query, args := range queries {
		query, args, err := sqlx.In(query, args...)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := q.db.QueryxContext(context.Background(), `EXPLAIN QUERY PLAN `+query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		p := strings.Join(plan, "; ")
		if strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("query sorts every match instead of reading an index in order:\n%s\nplan: %s", query, p)
		}
		if query == claimUpdateSQL && !strings.Contains(p, "SEARCH litequeue_jobs USING INTEGER PRIMARY KEY") {
			t.Errorf("the claim's update does not look its rows up by id:\n%s\nplan: %s", query, p)
		}
	}
}
