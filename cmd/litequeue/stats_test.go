package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

func TestStats(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "stats")
	golden(t, "stats.golden", r.stdout)

	r = mustRun(t, fx.cli(""), "stats", "--json")
	var got statsJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	want := statsJSON{
		Queues: map[string]queueStatsJSON{
			"default": {Due: 1, Scheduled: 1, Dead: 1, Completed: 1, Discarded: 1, OldestDueMS: new(int64(60000))},
			"reports": {Scheduled: 1, Dead: 1},
		},
		RetriesLastHour: []errorCountJSON{{"email.send", "*main.mailboxError", 2}},
		DeathsLastHour:  map[string]int{"email.send": 1, "report.render": 1},
		DeathsByClassLastHour: []errorCountJSON{
			{"email.send", "*main.mailboxError", 1},
			{"report.render", "*errors.errorString", 1},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats --json (-want +got):\n%s", diff)
	}
}

func TestStats_Empty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	q, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	r := mustRun(t, testCLI(""), "--db", path, "stats")
	if got, want := r.stdout, "no jobs\n\nretries in the last hour: none\n\ndeaths in the last hour: none\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
