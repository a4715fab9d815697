package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

func TestEnqueue(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "enqueue", "email.send", `{"to":"lin@example.com"}`,
		"--queue", "mail", "--delay", "1d2h", "--priority", "3", "--unique", "welcome-lin", "--max-tries", "4")
	var id int64
	if _, err := fmt.Sscanf(r.stdout, "enqueued job %d:", &id); err != nil {
		t.Fatalf("%v in %q", err, r.stdout)
	}
	if want := "enqueued job 8: email.send on queue mail, due 2026-03-03T11:31:00.000Z\n"; r.stdout != want {
		t.Errorf("got %q, want %q", r.stdout, want)
	}
	q := openFixture(t, fx)
	j, err := q.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if j.Queue != "mail" || j.Kind != "email.send" || string(j.Payload) != `{"to":"lin@example.com"}` ||
		j.Priority != 3 || j.UniqueKey != "welcome-lin" || j.MaxTries != 4 ||
		!j.RunAt.Equal(epoch.Add(time.Minute+26*time.Hour)) {
		t.Errorf("stored %+v", j)
	}

	// The same unique key again adds nothing.
	r = mustRun(t, fx.cli(""), "enqueue", "email.send", `{}`, "--unique", "welcome-lin", "--json")
	var dup struct {
		jobJSON
		Duplicate bool `json:"duplicate"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &dup); err != nil {
		t.Fatal(err)
	}
	if !dup.Duplicate || dup.ID != id {
		t.Errorf("second enqueue: %+v, want job %d as a duplicate", dup, id)
	}

	// Without a payload the job carries JSON null.
	mustRun(t, fx.cli(""), "enqueue", "ping")
	jobs, err := q.List(context.Background(), litequeue.Filter{Kind: "ping"})
	if err != nil || len(jobs) != 1 || string(jobs[0].Payload) != "null" || jobs[0].Queue != "default" {
		t.Errorf("enqueue ping: %v %+v", err, jobs)
	}
	if !strings.Contains(mustRun(t, fx.cli(""), "list", "--kind", "ping").stdout, "pending") {
		t.Error("the job does not list")
	}
}

// TestEnqueue_BadJSON: a payload that is not JSON is a usage error that
// says where it goes wrong and quotes only the payload's start, however
// long it is; nothing is enqueued.
func TestEnqueue_BadJSON(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	before, err := q.List(context.Background(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		payload string
		says    string
	}{
		{`{"to":}`, `payload "{\"to\":}" is not valid JSON: invalid character '}' looking for beginning of value (at byte 7)`},
		{`[` + strings.Repeat(`"été",`, 20_000) + `]`, `payload "[\"été\",\"été\",\"été\",\"été"… (160002 bytes) is not valid JSON: ` +
			`invalid character ']' looking for beginning of value (at byte 160002)`},
	} {
		r := runCLI(t, fx.cli(""), "enqueue", "email.send", tt.payload)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.says) || len(r.stderr) > 400 {
			t.Errorf("enqueue of %d bytes of bad JSON: exit %d, %d bytes of stderr:\n%.600s\nwant exit %d and %q", len(tt.payload), r.code, len(r.stderr), r.stderr, exitUsage, tt.says)
		}
	}
	if after, err := q.List(context.Background(), litequeue.Filter{}); err != nil || len(after) != len(before) {
		t.Errorf("after the refusals: %d jobs, %d before (%v)", len(after), len(before), err)
	}
}

// TestEnqueue_After: --after makes the job wait for the jobs it names,
// with --if-failed's rule; bad IDs and rules are usage errors, an ID of
// no job a failure, and neither adds a job.
func TestEnqueue_After(t *testing.T) {
	fx := newFixture(t)
	r := mustRun(t, fx.cli(""), "enqueue", "resize", "--after", "1, 2", "--if-failed", "wait")
	var id int64
	if _, err := fmt.Sscanf(r.stdout, "enqueued job %d:", &id); err != nil || !strings.HasSuffix(r.stdout, ": resize on queue default, waiting for its dependencies\n") {
		t.Fatalf("stdout %q (%v)", r.stdout, err)
	}
	q := openFixture(t, fx)
	deps, err := q.Dependencies(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != 2 || deps[0].Edge.On != 1 || deps[1].Edge.On != 2 || deps[0].Edge.Rule != litequeue.WaitIfFailed {
		t.Fatalf("dependencies %+v, want jobs 1 and 2, rule wait", deps)
	}
	before, err := q.List(context.Background(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--after", "1,x"}, exitUsage, `--after "1,x": "x" is not a job ID`},
		{[]string{"--after", "0"}, exitUsage, `--after "0": "0" is not a job ID`},
		{[]string{"--after", "1", "--if-failed", "retry"}, exitUsage, `--if-failed "retry" is not one of cancel, wait, run`},
		{[]string{"--if-failed", "run"}, exitUsage, "--if-failed run without --after"},
		{[]string{"--after", "999"}, 1, "dependency 999: litequeue: job not found"},
	} {
		r := runCLI(t, fx.cli(""), append([]string{"enqueue", "resize"}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("enqueue %q: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.says)
		}
	}
	if after, err := q.List(context.Background(), litequeue.Filter{}); err != nil || len(after) != len(before) {
		t.Errorf("after the refusals: %d jobs, %d before (%v)", len(after), len(before), err)
	}
}
