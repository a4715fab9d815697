package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

func TestDemo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.db")
	c := testCLI("")
	r := mustRun(t, c, "demo", "--db", path, "--jobs", "40")
	for _, want := range []string{
		"All 46 jobs finished in",
		"QUEUE    DUE  SCHEDULED",
		"invoice.render  *main.templateError  6\n",
		"dead letters:",
		"litequeue --db " + path + " dead list",
		"litequeue --db " + path + " dead retry ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the demo does not say %q:\n%s", want, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr without a terminal: %q, want nothing", r.stderr)
	}

	// Every job is finished; the invoices are dead with one try.
	q, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	for _, st := range []litequeue.State{litequeue.Pending, litequeue.Running} {
		if jobs, err := q.List(ctx, litequeue.Filter{State: st}); err != nil || len(jobs) != 0 {
			t.Errorf("%d jobs %s after the demo (%v)", len(jobs), st, err)
		}
	}
	dead, err := q.List(ctx, litequeue.Filter{State: litequeue.Dead, Kind: "invoice.render"})
	if err != nil || len(dead) != demoInvoices {
		t.Fatalf("%d dead invoices (%v), want %d", len(dead), err, demoInvoices)
	}

	// The command it suggests works on the file it made.
	m := regexp.MustCompile(`show (\d+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no show command in:\n%s", r.stdout)
	}
	if s := mustRun(t, testCLI(""), "--db", path, "show", m[1]); !strings.Contains(s.stdout, "state       dead") {
		t.Errorf("show %s:\n%s", m[1], s.stdout)
	}

	// A second demo replaces the first.
	mustRun(t, testCLI(""), "demo", "--db", path, "--jobs", "5")
	q2, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	all, err := q2.List(ctx, litequeue.Filter{})
	if err != nil || len(all) != 5+demoInvoices {
		t.Errorf("%d jobs after a second demo (%v), want %d", len(all), err, 5+demoInvoices)
	}
}

func TestDemo_RefusesOtherFiles(t *testing.T) {
	fx := newFixture(t)
	before, err := os.ReadFile(fx.path)
	if err != nil {
		t.Fatal(err)
	}
	notSQLite := filepath.Join(t.TempDir(), "notes.db")
	if err := os.WriteFile(notSQLite, []byte("my notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fx.path, notSQLite} {
		r := runCLI(t, testCLI(""), "demo", "--db", path)
		if r.code != exitFailure || !strings.Contains(r.stderr, "is not a demo database") {
			t.Errorf("demo --db %s: exit %d, stderr %q", path, r.code, r.stderr)
		}
	}
	after, err := os.ReadFile(fx.path)
	if err != nil || string(before) != string(after) {
		t.Errorf("the demo changed a file that is not its own (%v)", err)
	}
}

func TestDemo_Progress(t *testing.T) {
	c := testCLI("")
	c.stderrTTY = true
	r := mustRun(t, c, "demo", "--db", filepath.Join(t.TempDir(), "demo.db"), "--jobs", "20")
	if !strings.Contains(r.stderr, "26/26 jobs finished") {
		t.Errorf("no progress bar on a terminal: %q", r.stderr)
	}
}

func TestDemo_Resume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.db")
	mustRun(t, testCLI(""), "demo", "--db", path, "--jobs", "10")
	r := mustRun(t, testCLI(""), "demo", "--db", path, "--resume")
	if !strings.Contains(r.stdout, "No job is pending") {
		t.Errorf("resume with nothing replayed:\n%s", r.stdout)
	}
	mustRun(t, testCLI(""), "--db", path, "dead", "retry", "--all", "--kind", "invoice.render", "--yes")
	r = mustRun(t, testCLI(""), "demo", "--db", path, "--resume")
	if !strings.Contains(r.stdout, "6 jobs finished in") {
		t.Errorf("resume:\n%s", r.stdout)
	}
	q, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	jobs, err := q.List(context.Background(), litequeue.Filter{Kind: "invoice.render", State: litequeue.Completed})
	if err != nil || len(jobs) != demoInvoices {
		t.Errorf("%d invoices completed after the resume (%v), want %d", len(jobs), err, demoInvoices)
	}

	fx := newFixture(t)
	if r := runCLI(t, testCLI(""), "demo", "--db", fx.path, "--resume"); r.code != exitFailure {
		t.Errorf("resume on a file that is not the demo's: exit %d, want 1", r.code)
	}
}
