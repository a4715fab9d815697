package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

func TestShow(t *testing.T) {
	fx := newFixture(t)
	for name, id := range map[string]int64{
		"show_dead.golden":      fx.bounced,
		"show_completed.golden": fx.sent,
		"show_waiting.golden":   fx.waiting,
	} {
		t.Run(name, func(t *testing.T) {
			r := mustRun(t, fx.cli(""), "show", fmt.Sprint(id))
			golden(t, name, r.stdout)
		})
	}
}

func TestShow_JSON(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "show", fmt.Sprint(fx.bounced), "--json")
	var got showJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	if got.Job.ID != fx.bounced || string(got.Job.Payload) != `"bounce@example.com"` {
		t.Errorf("job %+v", got.Job)
	}
	var outcomes []string
	var delays []int64
	for _, a := range got.History {
		outcomes = append(outcomes, string(a.Outcome))
		delays = append(delays, a.DelayMS)
		if a.Worker != "worker-1" || a.ErrorClass != "*main.mailboxError" {
			t.Errorf("attempt %+v", a)
		}
	}
	if diff := cmp.Diff([]string{"failed", "failed", "failed"}, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{1000, 2000, 0}, delays); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	if got, want := got.History[1].StartedAt, epoch.Add(3*time.Second); !got.Equal(want) {
		t.Errorf("started_at %v, want %v", got, want)
	}
	if !strings.Contains(r.stdout, `"finished_at": "2026-03-02T09:30:04.5Z"`) {
		t.Errorf("times are not RFC 3339 in UTC:\n%s", r.stdout)
	}

	r = mustRun(t, fx.cli(""), "show", fmt.Sprint(fx.waiting), "--json")
	got = showJSON{}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Job.PayloadBase64) != "not json" || got.Job.Payload != nil || len(got.History) != 0 {
		t.Errorf("a payload that is not JSON: %+v", got)
	}
}

func TestShow_NotFound(t *testing.T) {
	fx := newFixture(t)
	r := runCLI(t, fx.cli(""), "show", "999")
	if r.code != exitFailure || !strings.Contains(r.stderr, "no job 999") {
		t.Errorf("exit %d, stderr %q; want 1 and no job 999", r.code, r.stderr)
	}
}

func TestDeadList(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "dead", "list")
	golden(t, "dead_list.golden", r.stdout)

	r = mustRun(t, fx.cli(""), "dead", "list", "--queue", "reports", "--json")
	var got []jobJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != fx.broken || got[0].Attempt != 1 {
		t.Errorf("dead list --queue reports: %+v", got)
	}
	r = mustRun(t, fx.cli(""), "dead", "list", "--kind", "email.send", "--queue", "reports")
	if got, want := r.stdout, "no dead jobs\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestInspect_MissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	for _, args := range [][]string{
		{"list"}, {"show", "1"}, {"dead", "list"}, {"check"},
		{"enqueue", "k"},
	} {
		c := testCLI("")
		c.db = path
		r := runCLI(t, c, args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, path+" does not exist") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and that the path does not exist", args, r.code, r.stderr)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("%v created %s", args, path)
		}
	}
}

func TestDBPath(t *testing.T) {
	fx := newFixture(t)
	c := testCLI("")
	c.getenv = func(k string) string {
		if k == "LITEQUEUE_DB" {
			return fx.path
		}
		return ""
	}
	r := mustRun(t, c, "dead", "list", "--json")
	if !strings.Contains(r.stdout, `"bounce@example.com"`) && !strings.Contains(r.stdout, fmt.Sprintf(`"id": %d`, fx.bounced)) {
		t.Errorf("$LITEQUEUE_DB was not used:\n%s", r.stdout)
	}
	// --db, before or after the command, wins over the environment.
	other := filepath.Join(t.TempDir(), "other.db")
	for _, args := range [][]string{{"--db", other, "list"}, {"list", "--db", other}} {
		r := runCLI(t, c, args...)
		if !strings.Contains(r.stderr, other+" does not exist") {
			t.Errorf("%v: stderr %q, want it to name %s", args, r.stderr, other)
		}
	}
}

func TestColor(t *testing.T) {
	fx := newFixture(t)
	c := fx.cli("")
	c.stdoutTTY = true
	r := mustRun(t, c, "list", "--state", "dead")
	if !strings.Contains(r.stdout, red+"dead"+reset) {
		t.Errorf("no colour on a terminal:\n%q", r.stdout)
	}
	// Painted, the columns still line up: strip the codes and compare.
	plain := mustRun(t, fx.cli(""), "list", "--state", "dead").stdout
	for _, code := range []string{red, bold, reset} {
		r.stdout = strings.ReplaceAll(r.stdout, code, "")
	}
	if diff := cmp.Diff(plain, r.stdout); diff != "" {
		t.Errorf("painted table, less its codes (-plain +painted):\n%s", diff)
	}

	c = fx.cli("")
	c.stdoutTTY = true
	c.getenv = func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}
	if r := mustRun(t, c, "list"); strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("colour despite NO_COLOR:\n%q", r.stdout)
	}
}

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

func TestDelayCell(t *testing.T) {
	failed := func(d time.Duration) litequeue.Attempt {
		return litequeue.Attempt{Outcome: litequeue.OutcomeFailed, Delay: d}
	}
	replayed := litequeue.Attempt{Outcome: litequeue.OutcomeReplayed}
	done := litequeue.Attempt{Outcome: litequeue.OutcomeCompleted}
	tests := []struct {
		state   litequeue.State
		history []litequeue.Attempt
		want    []string
	}{
		{litequeue.Completed, []litequeue.Attempt{failed(0), failed(12 * time.Millisecond), done}, []string{"0s", "12ms", "-"}},
		{litequeue.Dead, []litequeue.Attempt{failed(time.Second), failed(0)}, []string{"1s", "-"}},
		{litequeue.Pending, []litequeue.Attempt{failed(time.Second), failed(0), replayed}, []string{"1s", "-", "-"}},
		{litequeue.Pending, []litequeue.Attempt{failed(0)}, []string{"0s"}},
	}
	for _, tt := range tests {
		var got []string
		for i := range tt.history {
			got = append(got, delayCell(&litequeue.Job{State: tt.state}, tt.history, i))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s job (-want +got):\n%s", tt.state, diff)
		}
	}
}
