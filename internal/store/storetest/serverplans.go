package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// serverPlanNode is a node of a PostgreSQL plan from EXPLAIN (ANALYZE,
// BUFFERS, FORMAT JSON).
type serverPlanNode struct {
	Type     string           `json:"Node Type"`
	Relation string           `json:"Relation Name"`
	Index    string           `json:"Index Name"`
	Hit      int              `json:"Shared Hit Blocks"`
	Read     int              `json:"Shared Read Blocks"`
	Plans    []serverPlanNode `json:"Plans"`
}

// check fails the test for a node that reads table other than through
// index.
func (n *serverPlanNode) check(tb testing.TB, what, table, index string) {
	tb.Helper()
	switch {
	case n.Type == "Bitmap Index Scan" && strings.HasPrefix(n.Index, table+"_") && n.Index != index,
		n.Relation == table && n.Type != "Bitmap Heap Scan" && n.Index != index: // a bitmap's index is its child's
		tb.Errorf("%s: a %s of %s through %q, want %s", what, n.Type, table, n.Index, index)
	}
	for i := range n.Plans {
		n.Plans[i].check(tb, what, table, index)
	}
}

// ServerBlocks runs query, as PostgreSQL's dialect turns it, on db, a
// PostgreSQL server, under EXPLAIN (ANALYZE, BUFFERS) in a transaction
// it rolls back, and returns the blocks it touched (shared, in the cache
// or read); it fails the test, naming the query as what, where the plan
// reads table other than through index. Rows read are not counted as
// such: PostgreSQL's plans give a node's rows per loop rounded, and count
// none that an index scan's own conditions skip.
func ServerBlocks(tb testing.TB, db *sqlx.DB, what, table, index, query string, args ...any) int {
	tb.Helper()
	tx, err := db.BeginTxx(tb.Context(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	var out string
	if err := tx.GetContext(tb.Context(), &out, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+(&store.Dialect{}).SQL(query), args...); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
	var plans []struct{ Plan serverPlanNode }
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		tb.Fatal(err)
	}
	p := &plans[0].Plan
	p.check(tb, what, table, index)
	return p.Hit + p.Read
}

// fillScheduled inserts into db, a PostgreSQL database of litequeue's
// tables, n pending jobs scheduled for 100,000 ms and later, of kinds k0,
// k1 and k2 and priorities 0 and 10; with due, three more due jobs: two
// of k0 at priority 0 (RunAt 900 and 901) and one of k1 at priority 10
// (RunAt 950).
func fillScheduled(tb testing.TB, db *sqlx.DB, n int, due bool) {
	tb.Helper()
	const insert = `INSERT INTO litequeue_jobs (queue, kind, payload, state, priority, max_tries, run_at, created_at) `
	queries := []string{insert + `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
		SELECT 'q', 'k' || (i % 3), '', 'pending', (i % 2) * 10, 3, 100000 + i, 0 FROM s`}
	if due {
		queries = append(queries, insert+`VALUES ('q', 'k0', '', 'pending', 0, 3, 900, 0),
			('q', 'k0', '', 'pending', 0, 3, 901, 0), ('q', 'k1', '', 'pending', 10, 3, 950, 0)`)
	}
	for i, q := range queries {
		var args []any
		if i == 0 {
			args = append(args, n)
		}
		if _, err := db.ExecContext(tb.Context(), (&store.Dialect{}).SQL(q), args...); err != nil {
			tb.Fatal(err)
		}
	}
}

// ServerScheduled runs check on the tables of a new engine that open
// opens on a PostgreSQL server, as a claim finds
// them with many jobs scheduled for later, the work of each read bounded
// by the kinds, their priorities and the limit or not: with
// fillScheduled's 3,000 scheduled jobs and three due, then with
// 27,000 more scheduled; on a table the server has no statistics of
// (never analyzed, autovacuum off), and on one analyzed at each step.
// check returns the blocks its reads touched, which may grow by less
// than half (the index gains a level, not its reads a row per job), where
// a scan of the scheduled jobs grows about tenfold.
func ServerScheduled(t *testing.T, open func(t *testing.T) *sqlx.DB, check func(t *testing.T, db *sqlx.DB) int) {
	for _, analyze := range []bool{false, true} {
		db := open(t)
		if _, err := db.ExecContext(t.Context(), `ALTER TABLE litequeue_jobs SET (autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
		var blocks []int
		for _, n := range []int{3_000, 27_000} {
			fillScheduled(t, db, n, n == 3_000)
			if analyze {
				if _, err := db.ExecContext(t.Context(), `ANALYZE litequeue_jobs`); err != nil {
					t.Fatal(err)
				}
			}
			var analyzes int
			if err := db.GetContext(t.Context(), &analyzes, `SELECT analyze_count + autoanalyze_count
				FROM pg_stat_user_tables WHERE relid = 'litequeue_jobs'::regclass`); err != nil || (analyzes > 0) != analyze {
				t.Fatalf("analyzed %d times, %v; want analyzed %v", analyzes, err, analyze)
			}
			blocks = append(blocks, check(t, db))
		}
		t.Logf("analyzed %v: %d blocks at 3,000 scheduled jobs, %d at 30,000", analyze, blocks[0], blocks[1])
		if blocks[1] >= blocks[0]*3/2 {
			t.Errorf("analyzed %v: %d blocks at 3,000 scheduled jobs, %d at 30,000: the work grows with them", analyze, blocks[0], blocks[1])
		}
	}
}
