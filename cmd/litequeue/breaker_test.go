package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestBreaker trips the breaker of a kind, then shows it with "stats" and
// closes it with "breaker reset".
func TestBreaker(t *testing.T) {
	fx := &fixture{path: filepath.Join(t.TempDir(), "jobs.db")}
	c := fx.cli("")
	clk := c.clock
	q, err := litequeue.Open(fx.path, litequeue.Options{Clock: clk, Retry: litequeue.Policy{MaxTries: 1}})
	if err != nil {
		t.Fatal(err)
	}
	q.Handle("charge", func(context.Context, *litequeue.Job) error { return errors.New("down") },
		litequeue.WithBreaker(litequeue.Breaker{Failures: 1}))
	if _, err := q.Enqueue(t.Context(), "charge", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	q.Close()

	opened := clk.Now()
	r := mustRun(t, fx.cli(""), "stats")
	want := fmt.Sprintf("\nbreaker charge: open since %s, cool-down until %s, 1 trip\n",
		fmtTime(opened), fmtTime(opened.Add(litequeue.DefaultBreakerCooldown)))
	if !strings.Contains(r.stdout, want) {
		t.Errorf("stats does not say %q:\n%s", want, r.stdout)
	}
	r = mustRun(t, fx.cli(""), "stats", "--json")
	if want := `"breakers": {`; !strings.Contains(r.stdout, want) {
		t.Errorf("stats --json has no %q:\n%s", want, r.stdout)
	}
	r = mustRun(t, fx.cli(""), "breaker", "reset", "charge")
	if got, want := r.stdout, fmt.Sprintf("closed the breaker of charge (open since %s, 1 trip): its jobs are claimed again\n", fmtTime(opened)); got != want {
		t.Errorf("breaker reset: got %q, want %q", got, want)
	}
	r = mustRun(t, fx.cli(""), "stats")
	if strings.Contains(r.stdout, "breaker") {
		t.Errorf("stats shows a breaker after the reset:\n%s", r.stdout)
	}
	r = mustRun(t, fx.cli(""), "breaker", "reset", "charge")
	if got, want := r.stdout, "the breaker of charge is closed already\n"; got != want {
		t.Errorf("breaker reset again: got %q, want %q", got, want)
	}
}
