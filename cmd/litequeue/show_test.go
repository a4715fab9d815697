package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

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

// TestShow_JSONOutput: show --json carries a completed job's output and
// a job's checkpoint, as JSON, and none for a job without one.
func TestShow_JSONOutput(t *testing.T) {
	fx := newFixture(t)
	for id, want := range map[int64][2]string{
		fx.sent:    {`{"message_id":"m-1.ada@example.com"}`, ""},
		fx.bounced: {"", `{"tries":3}`},
	} {
		r := mustRun(t, fx.cli(""), "show", fmt.Sprint(id), "--json")
		var got showJSON
		if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
			t.Fatalf("%v in:\n%s", err, r.stdout)
		}
		if out, cp := compactJSON(t, got.Job.Output), compactJSON(t, got.Job.Checkpoint); out != want[0] || cp != want[1] ||
			got.Job.OutputBase64 != nil || got.Job.CheckpointBase64 != nil {
			t.Errorf("job %d's output %q and checkpoint %q, want %q", id, out, cp, want)
		}
	}
}

// compactJSON is v compacted; "" for none.
func compactJSON(t *testing.T, v json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if len(v) > 0 {
		if err := json.Compact(&b, v); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}
