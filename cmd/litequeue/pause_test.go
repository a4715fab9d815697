package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestPause pauses a kind and a queue, which stats then shows, and resumes
// the kind.
func TestPause(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	since := epoch.Add(time.Minute) // the cli's clock
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"pause", "--kind", "email.send"}, "paused kind email.send: no worker claims its jobs until 'litequeue resume --kind email.send'\n"},
		{[]string{"pause", "--queue", "reports"}, "paused queue reports: no worker claims its jobs until 'litequeue resume --queue reports'\n"},
		{[]string{"pause", "--queue", "reports"}, "paused queue reports: no worker claims its jobs until 'litequeue resume --queue reports'\n"},
	} {
		if got := mustRun(t, fx.cli(""), tt.args...).stdout; got != tt.want {
			t.Errorf("%v: got %q, want %q", tt.args, got, tt.want)
		}
	}
	stats := mustRun(t, fx.cli(""), "stats").stdout
	if want := "\npaused: queue reports (since 2026-03-02T09:31:00.000Z), kind email.send (since 2026-03-02T09:31:00.000Z)\n"; !strings.HasSuffix(stats, want) {
		t.Errorf("stats does not end in %q:\n%s", want, stats)
	}
	var js statsJSON
	if err := json.Unmarshal([]byte(mustRun(t, fx.cli(""), "stats", "--json").stdout), &js); err != nil {
		t.Fatal(err)
	}
	want := []pauseJSON{{Queue: "reports", SinceMS: since.UnixMilli()}, {Kind: "email.send", SinceMS: since.UnixMilli()}}
	if diff := cmp.Diff(want, js.Paused); diff != "" {
		t.Errorf("stats --json paused (-want +got):\n%s", diff)
	}

	if got, want := mustRun(t, fx.cli(""), "resume", "--kind", "email.send").stdout, "resumed kind email.send\n"; got != want {
		t.Errorf("resume: got %q, want %q", got, want)
	}
	ps, err := q.Paused(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]litequeue.Pause{{Queue: "reports", Since: since}}, ps); diff != "" {
		t.Errorf("paused after the resume (-want +got):\n%s", diff)
	}
}

// TestPause_ResumeNotPaused resumes a kind and a queue that are not
// paused: the command says so, and nothing changes.
func TestPause_ResumeNotPaused(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	mustRun(t, fx.cli(""), "pause", "--queue", "reports")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"resume", "--kind", "email.send"}, "kind email.send was not paused\n"},
		{[]string{"resume", "--kind", "reports"}, "kind reports was not paused\n"},
		{[]string{"resume", "--queue", "default"}, "queue default was not paused\n"},
	} {
		if got := mustRun(t, fx.cli(""), tt.args...).stdout; got != tt.want {
			t.Errorf("%v: got %q, want %q", tt.args, got, tt.want)
		}
	}
	ps, err := q.Paused(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]litequeue.Pause{{Queue: "reports", Since: epoch.Add(time.Minute)}}, ps); diff != "" {
		t.Errorf("paused after resuming what was not (-want +got):\n%s", diff)
	}
}

func TestPause_Refuses(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	for _, tt := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"pause"}, exitUsage, "name the queue (--queue) or the kind (--kind), one of them"},
		{[]string{"resume", "--queue", "a", "--kind", "b"}, exitUsage, "name the queue (--queue) or the kind (--kind), one of them"},
		{[]string{"pause", "--kind", ""}, exitUsage, "--kind is empty: name the kind to pause"},
		{[]string{"pause", "--queue", ""}, exitUsage, "--queue is empty: name the queue to pause"},
		{[]string{"resume", "--queue", ""}, exitUsage, "--queue is empty: name the queue to resume"},
		{[]string{"pause", "x"}, exitUsage, `unexpected argument "x"`},
	} {
		r := runCLI(t, fx.cli(""), tt.args...)
		if r.code != tt.code || r.stdout != "" || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, nothing, and %q", tt.args, r.code, r.stdout, r.stderr, tt.code, tt.says)
		}
	}
	if ps, err := q.Paused(context.Background()); err != nil || len(ps) != 0 {
		t.Errorf("paused after the refusals: %v, %v; want nothing", ps, err)
	}
}
