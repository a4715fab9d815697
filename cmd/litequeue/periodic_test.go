package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// periodicDB builds a database with two schedules, one of which has
// fired, and returns its path and a cli on it whose clock stands at 10:05.
func periodicDB(t *testing.T) (string, *cli, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.db")
	clk := clock.NewMock()
	clk.Set(epoch) // Monday 2026-03-02 09:30 UTC
	q, err := litequeue.Open(path, litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := q.Periodic(ctx, "hourly-sync", "@hourly", "sync", nil, litequeue.PeriodicJob(litequeue.OnQueue("sync"))); err != nil {
		t.Fatal(err)
	}
	if err := q.Periodic(ctx, "morning-report", "0 9 * * MON-FRI", "report", nil,
		litequeue.PeriodicIn(berlin), litequeue.OnMissed(litequeue.SkipMissed)); err != nil {
		t.Fatal(err)
	}
	clk.Set(epoch.Add(30 * time.Minute)) // 10:00: hourly-sync fires
	if _, err := q.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	jobs, err := q.List(ctx, litequeue.Filter{Kind: "sync"})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v, %v; want one", jobs, err)
	}
	c := testCLI("")
	c.db = path
	c.clock = clock.NewMock()
	c.clock.(*clock.Mock).Set(epoch.Add(35 * time.Minute))
	return path, c, jobs[0].ID
}

func TestPeriodicList(t *testing.T) {
	_, c, _ := periodicDB(t)
	r := mustRun(t, c, "periodic", "list")
	golden(t, "periodic_list.golden", r.stdout)
}

func TestPeriodicList_JSON(t *testing.T) {
	_, c, id := periodicDB(t)
	r := mustRun(t, c, "periodic", "list", "--json", "--name", "hourly-sync")
	var got []periodicJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	at := func(d time.Duration) *time.Time { t := epoch.Add(d); return &t }
	want := []periodicJSON{{
		Name: "hourly-sync", Spec: "@hourly", Kind: "sync", Queue: "sync", Location: "UTC", Missed: "one",
		LastSlot: *at(30 * time.Minute), LastJobID: id, LastFired: at(30 * time.Minute),
		NextSlot: at(90 * time.Minute), RegisteredAt: epoch,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("periodic list --json (-want +got):\n%s", diff)
	}
}

func TestPeriodicList_None(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	q, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	r := mustRun(t, testCLI(""), "--db", path, "periodic", "list")
	if got, want := r.stdout, "no periodic jobs\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r = mustRun(t, testCLI(""), "--db", path, "periodic", "list", "--json")
	if got, want := r.stdout, "[]\n"; got != want {
		t.Errorf("--json: got %q, want %q", got, want)
	}
}
