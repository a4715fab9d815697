package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPolicy(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"policy_default.golden", []string{"policy"}},
		{"policy_config.golden", []string{"--config", "testdata/litequeue.toml", "policy"}},
		{"policy_payments.golden", []string{"policy", "payments", "--config", "testdata/litequeue.toml"}},
		{"policy_webhooks.golden", []string{"--config", "testdata/litequeue.toml", "policy", "webhooks"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			golden(t, tt.golden, mustRun(t, testCLI(""), tt.args...).stdout)
		})
	}
}

func TestPolicy_JSON(t *testing.T) {
	r := mustRun(t, testCLI(""), "policy", "--json")
	var got policyJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	want := policyJSON{
		Source: "defaults", Why: "no database at litequeue.db to read the app's from",
		Name: "default", Backoff: "exponential", BaseMS: 2000, CeilingMS: 900000, MaxTries: 8, Jitter: "full",
		Schedule: []stepJSON{
			{1, 2000, 2000}, {2, 4000, 6000}, {3, 8000, 14000}, {4, 16000, 30000},
			{5, 32000, 62000}, {6, 64000, 126000}, {7, 128000, 254000},
		},
		TotalMS: 254000,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("policy --json (-want +got):\n%s", diff)
	}
}

func TestPolicy_Unknown(t *testing.T) {
	r := runCLI(t, testCLI(""), "--config", "testdata/litequeue.toml", "policy", "billing")
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown policy "billing"`) ||
		!strings.Contains(r.stderr, "default, payments, webhooks") {
		t.Errorf("exit %d, stderr %q; want 2 naming the policy and the known ones", r.code, r.stderr)
	}
}

func TestSimulate(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "jitter.svg")
	r := mustRun(t, testCLI(""), "policy", "simulate", "--jobs", "200", "--outage", "20s", "--svg", svg)
	golden(t, "simulate.golden", r.stdout)
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "simulate.svg", string(data))

	// A named policy without jitter is compared with full jitter; a fast
	// policy gets columns and a resolution under a second.
	r = mustRun(t, testCLI(""), "--config", "testdata/litequeue.toml", "policy", "simulate", "webhooks", "--jobs", "50", "--outage", "12s")
	golden(t, "simulate_webhooks.golden", r.stdout)
}

func TestSimulate_SameSeedSameChart(t *testing.T) {
	a := mustRun(t, testCLI(""), "policy", "simulate", "--seed", "7")
	b := mustRun(t, testCLI(""), "policy", "simulate", "--seed", "7")
	c := mustRun(t, testCLI(""), "policy", "simulate", "--seed", "8")
	if a.stdout != b.stdout {
		t.Error("the same seed gave two charts")
	}
	if a.stdout == c.stdout {
		t.Error("two seeds gave the same chart")
	}
}

func TestSimRun(t *testing.T) {
	// Without jitter the default policy's jobs retry at 2s, 6s, 14s and
	// 30s, and succeed at 30s: 5 attempts each.
	p := newSimChart("default", defaultPolicy(), 10, 30e9, 1)
	flat := p.series[1]
	if got, want := flat.attempts, 50; got != want {
		t.Errorf("no jitter: %d attempts, want %d", got, want)
	}
	if got, want := flat.peak, 10; got != want {
		t.Errorf("no jitter: peak %d retries, want %d", got, want)
	}
	if flat.dead != 0 || flat.end != 30e9 {
		t.Errorf("no jitter: %d dead, end %v; want 0, 30s", flat.dead, flat.end)
	}
	// An outage longer than every wait kills every job after 8 tries.
	p = newSimChart("default", defaultPolicy(), 10, 3600e9, 1)
	for _, s := range p.series {
		if s.dead != 10 || s.attempts != 80 {
			t.Errorf("%s: %d dead, %d attempts; want 10, 80", s.label, s.dead, s.attempts)
		}
	}
}

func TestSimulate_JSON(t *testing.T) {
	r := mustRun(t, testCLI(""), "policy", "simulate", "--jobs", "100", "--outage", "30s", "--json")
	var got simJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v in:\n%s", err, r.stdout)
	}
	if got.Jobs != 100 || got.OutageMS != 30000 || got.ResolutionMS != 100 || len(got.Series) != 2 {
		t.Fatalf("got %+v", got)
	}
	flat := got.Series[1]
	if flat.Label != "no jitter" || flat.Attempts != 500 || flat.PeakRetries != 100 || flat.EndMS != 30000 {
		t.Errorf("no jitter: %+v", flat)
	}
	if got.Series[0].PeakRetries >= 100 || len(got.Series[0].Columns) == 0 {
		t.Errorf("full jitter: %+v", got.Series[0])
	}
}
