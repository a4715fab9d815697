package store_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
	_ "modernc.org/sqlite"
)

// openSchema opens a new SQLite file with the file's schema (schema.sql,
// at the top of the repository), for the tests of the plans SQLite makes
// of the store's statements.
func openSchema(t *testing.T) *sqlx.DB {
	t.Helper()
	schema, err := os.ReadFile(filepath.Join("..", "..", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "plans.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestQueryPlans_NoEphemeralPerRow checks that the statements a job's
// life writes, once or more per job, build no ephemeral table. A partial
// index whose condition was "outcome IN (…)" of four values had each
// history row's insert build one, to test the row against the list:
// 13.4 µs a row against 7.8 for the same condition as ORs (see FailedSQL).
// The claim's UPDATE … FROM json_each builds one per statement, for the
// join, and is not here.
func TestQueryPlans_NoEphemeralPerRow(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	for name, query := range map[string]string{
		"settle a run":      store.SetHeldRowSQL,
		"store a decision":  store.SetRowSQL,
		"add a history row": store.InsertAttemptsSQL(1),
		"add history rows":  store.InsertAttemptsSQL(8),
	} {
		if ops := storetest.OpcodesOf(t, db, query); slices.Contains(ops, "OpenEphemeral") {
			t.Errorf("%s builds an ephemeral table:\n%s\nprogram: %s", name, query, strings.Join(ops, " "))
		}
	}
}

// TestQueryPlans_Breaker checks that a breaker counts a kind's failures
// through the partial index of failed runs, litequeue_attempts_breaker,
// whose condition FailedSQL must repeat term for term.
func TestQueryPlans_Breaker(t *testing.T) {
	t.Parallel()
	db := openSchema(t)
	if p := storetest.PlanOf(t, db, store.FailedSinceSQL, "k", 0); !strings.Contains(p, "INDEX litequeue_attempts_breaker") {
		t.Errorf("the count of failures does not use litequeue_attempts_breaker:\n%s\nplan: %s", store.FailedSinceSQL, p)
	}
}
