// Package storetest holds what the tests of litequeue's storage share:
// SQLite's plans of a statement, and the suite that every engine passes.
package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
)

// PlanOf returns SQLite's EXPLAIN QUERY PLAN of the query on db, its steps
// joined by "; ". (?) lists are expanded as sqlx.In does.
func PlanOf(tb testing.TB, db *sqlx.DB, query string, args ...any) string {
	tb.Helper()
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		tb.Fatal(err)
	}
	rows, err := db.QueryxContext(tb.Context(), `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			tb.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// ReadsIndex fails the test, naming the query as what, unless SQLite's
// plan of the query on db reads index and sorts nothing: a query that
// reads an index in the order it needs stops at its LIMIT, where one that
// sorts (a TEMP B-TREE) reads every match first.
func ReadsIndex(tb testing.TB, db *sqlx.DB, what, index, query string, args ...any) {
	tb.Helper()
	p := PlanOf(tb, db, query, args...)
	if !strings.Contains(p, "INDEX "+index) {
		tb.Errorf("%s: the plan does not use %s:\n%s\nplan: %s", what, index, query, p)
	}
	if strings.Contains(p, "TEMP B-TREE") {
		tb.Errorf("%s: the query sorts every match instead of reading an index in order:\n%s\nplan: %s", what, query, p)
	}
}

// OpcodesOf returns the opcodes of the program SQLite compiles query to
// on db.
func OpcodesOf(tb testing.TB, db *sqlx.DB, query string) []string {
	tb.Helper()
	args := make([]any, strings.Count(query, "?"))
	rows, err := db.QueryxContext(tb.Context(), `EXPLAIN `+query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var ops []string
	for rows.Next() {
		m := map[string]any{}
		if err := rows.MapScan(m); err != nil {
			tb.Fatal(err)
		}
		ops = append(ops, fmt.Sprint(m["opcode"]))
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return ops
}
