package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

func TestList(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		golden string
		args   []string
	}{
		{"list.golden", []string{"list"}},
		{"list_state_dead.golden", []string{"list", "--state", "dead"}},
		{"list_queue_kind.golden", []string{"list", "--queue", "reports", "--kind", "report.render"}},
		{"list_none.golden", []string{"list", "--kind", "nothing.here"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			r := mustRun(t, fx.cli(""), tt.args...)
			golden(t, tt.golden, r.stdout)
			if r.stderr != "" {
				t.Errorf("stderr: %q, want none", r.stderr)
			}
		})
	}
}

func TestList_Limit(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "list", "--limit", "2")
	if got, want := strings.Count(r.stdout, "\n"), 3; got != want {
		t.Errorf("%d lines, want %d (a header and 2 jobs):\n%s", got, want, r.stdout)
	}
	if !strings.Contains(r.stderr, "the first 2 shown") {
		t.Errorf("stderr %q does not say the list was cut", r.stderr)
	}
	r = mustRun(t, fx.cli(""), "list", "--limit", "0")
	if got, want := strings.Count(r.stdout, "\n"), 8; got != want {
		t.Errorf("--limit 0: %d lines, want %d", got, want)
	}
}

func TestList_JSON(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "list", "--json", "--state", "dead")
	var got []jobJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	if len(got) != 2 || got[0].ID != fx.bounced || got[1].ID != fx.broken {
		t.Fatalf("got %+v, want the jobs %d and %d", got, fx.bounced, fx.broken)
	}
	j := got[0]
	if j.State != litequeue.Dead || j.Attempt != 3 || j.MaxTries != 3 || j.Priority != 5 {
		t.Errorf("got %+v", j)
	}
	if j.FinishedAt == nil || !j.FinishedAt.Equal(epoch.Add(8*time.Second)) {
		t.Errorf("finished_at %v, want %v", j.FinishedAt, epoch.Add(8*time.Second))
	}
	if got, want := j.LastError, "deliver to bounce@example.com: smtp: 550 mailbox unavailable"; got != want {
		t.Errorf("last_error %q, want %q", got, want)
	}
	r = mustRun(t, fx.cli(""), "list", "--json", "--kind", "nothing.here")
	if got, want := strings.TrimSpace(r.stdout), "[]"; got != want {
		t.Errorf("empty list: %q, want %q", got, want)
	}
}
