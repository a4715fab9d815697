package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// TestOpen_UpgradeVersion5_Workers upgrades tables of version 5, which
// have no litequeue_workers, and those of an upgrade to version 6 killed
// after its step: each Open makes them as a new database has them, keeps
// the job, and a Work loop on them records itself.
func TestOpen_UpgradeVersion5_Workers(t *testing.T) {
	t.Parallel()
	for _, stepped := range []bool{false, true} {
		dsn, _ := versionTables(t, 5, stepped)
		checkUpgraded(t, dsn, 1)

		worker := open(t, dsn, clock.NewMock())
		worker.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- worker.Work(ctx, litequeue.WorkerOptions{Name: "upgraded"}) }()
		var ws []litequeue.WorkerInfo
		for deadline := time.Now().Add(10 * time.Second); len(ws) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			var err error
			if ws, err = worker.Workers(t.Context()); err != nil {
				t.Fatalf("stepped %v: Workers: %v", stepped, err)
			}
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(ws) != 1 || ws[0].Name != "upgraded" {
			t.Errorf("stepped %v: Workers on the upgraded tables = %+v, want the one Work loop", stepped, ws)
		}
	}
}
