package postgres_test

import (
	"context"
	"testing"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
)

// TestOpen_UpgradePolicies upgrades tables of version 5, which have no
// litequeue_policies, and those of an upgrade to version 6 killed after
// its step: each Open makes them as a new database has them, keeps the
// job, and a worker's RunDue on them records its policies.
func TestOpen_UpgradePolicies(t *testing.T) {
	t.Parallel()
	for _, stepped := range []bool{false, true} {
		dsn := pgtest.DSN(t)
		q := open(t, dsn, clock.NewMock())
		if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
			t.Fatal(err)
		}
		q.Close()
		stmts := []string{`UPDATE litequeue_meta SET value = '5' WHERE name = 'schema_version'`}
		if !stepped {
			stmts = append(stmts, `DROP TABLE litequeue_policies`)
		}
		for _, stmt := range stmts {
			if _, err := adminDB(t, dsn).Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		checkUpgraded(t, dsn, 1)
		worker := open(t, dsn, clock.NewMock())
		worker.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
		if n, err := worker.RunDue(t.Context()); err != nil || n != 1 {
			t.Fatalf("stepped %v: RunDue = %d, %v; want the one job run", stepped, n, err)
		}
		got, err := worker.RecordedPolicies(t.Context())
		if err != nil || len(got) != 2 || got[0].Scope != "default" || got[1].Name != "k" {
			t.Fatalf("stepped %v: RecordedPolicies = %+v, %v; want the default and the kind k", stepped, got, err)
		}
	}
}
