package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
)

// TestOpen_UpgradeVersion5 upgrades tables of version 5, which have no
// litequeue_throughput, as a binary of version 5 left them: Open makes
// them as a new database has them and keeps the job, and a worker's run
// on them is counted in the throughput.
func TestOpen_UpgradeVersion5(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	q := open(t, dsn, clock.NewMock())
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	q.Close()
	admin := adminDB(t, dsn)
	for _, stmt := range []string{
		`UPDATE litequeue_meta SET value = '5' WHERE name = 'schema_version'`,
		`DROP TABLE litequeue_throughput`,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	checkUpgraded(t, dsn, 1)
	worker := open(t, dsn, clock.NewMock())
	worker.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
	if n, err := worker.RunDue(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunDue = %d, %v; want the one job run", n, err)
	}
	points, err := worker.Throughput(t.Context(), time.Minute, time.Minute)
	if err != nil || len(points) != 1 || points[0].Completed != 1 {
		t.Fatalf("Throughput = %+v, %v; want the one run completed", points, err)
	}
}
