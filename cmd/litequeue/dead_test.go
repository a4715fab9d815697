package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// state reads a job's state through a read-only Queue.
func state(t *testing.T, q *litequeue.Queue, id int64) litequeue.State {
	t.Helper()
	j, err := q.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.State
}

// TestDeadRetry_WhileWorking replays a dead job while an app works on the
// same file, and waits for the app to run it. Everything is on the real
// clock, as in production: the app's janitor would purge a job that died
// at the fixture's date.
func TestDeadRetry_WhileWorking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	ctx := context.Background()
	// Yesterday's deploy: a handler that failed for good.
	old, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.Permanent(errors.New("smtp: bad credentials"))
	})
	job, err := old.Enqueue(ctx, "email.send", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	old.Close()

	// Today's app, fixed, works on the file.
	app, err := litequeue.Open(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error { return nil })
	wctx, stop := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() { worked <- app.Work(wctx, litequeue.WorkerOptions{Name: "app-1"}) }()
	defer func() {
		stop()
		if err := <-worked; err != nil {
			t.Errorf("Work: %v", err)
		}
		app.Close()
	}()

	c := testCLI("")
	c.db = path
	if got := mustRun(t, c, "show", fmt.Sprint(job.ID)).stdout; !strings.Contains(got, "state       dead") {
		t.Fatalf("before the replay:\n%s", got)
	}
	r := mustRun(t, c, "dead", "retry", fmt.Sprint(job.ID))
	if got, want := r.stdout, fmt.Sprintf("replayed job %d: pending, due now\n", job.ID); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	q, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	deadline := time.Now().Add(10 * time.Second)
	for state(t, q, job.ID) != litequeue.Completed {
		if time.Now().After(deadline) {
			t.Fatalf("the replayed job is %s after 10s, want completed", state(t, q, job.ID))
		}
		time.Sleep(5 * time.Millisecond)
	}
	show := mustRun(t, c, "show", fmt.Sprint(job.ID)).stdout
	for _, want := range []string{"history (3 rows", "replayed", "completed  -      app-1"} {
		if !strings.Contains(show, want) {
			t.Errorf("show does not say %q:\n%s", want, show)
		}
	}
}

func TestDeadRetry_IDs(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	r := runCLI(t, fx.cli(""), "dead", "retry", fmt.Sprint(fx.sent), "999", fmt.Sprint(fx.broken))
	if r.code != exitFailure {
		t.Errorf("exit %d, want 1", r.code)
	}
	if got, want := r.stdout, fmt.Sprintf("replayed job %d: pending, due now\n", fx.broken); got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	for _, want := range []string{fmt.Sprintf("replay job %d: it is completed", fx.sent), "no job 999"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
	if got := state(t, q, fx.broken); got != litequeue.Pending {
		t.Errorf("replayed job is %s, want pending", got)
	}

	// --dry-run changes nothing.
	r = mustRun(t, fx.cli(""), "dead", "retry", fmt.Sprint(fx.bounced), "--dry-run")
	if got, want := r.stdout, fmt.Sprintf("would replay job %d (email.send on default)\n", fx.bounced); got != want {
		t.Errorf("dry run: %q, want %q", got, want)
	}
	if got := state(t, q, fx.bounced); got != litequeue.Dead {
		t.Errorf("after a dry run the job is %s, want dead", got)
	}
}

func TestDeadRetry_All(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		tty      bool
		stdin    string
		code     int
		replayed int
		stdout   string // a line of it
		stderr   string
	}{
		{"refused without a terminal", nil, false, "", exitUsage, 0, "2 dead jobs in all\n",
			"refusing to replay 2 jobs unasked: no terminal to ask on (add --yes)"},
		{"--yes", []string{"--yes"}, false, "", exitOK, 2, "replayed 2 jobs: pending, due now\n", ""},
		{"asks on a terminal: no", nil, true, "n\n", exitOK, 0, "2 dead jobs in all\n", "Replay 2 dead jobs? [y/N] nothing replayed\n"},
		{"asks on a terminal: yes", nil, true, "y\n", exitOK, 2, "replayed 2 jobs: pending, due now\n", "Replay 2 dead jobs? [y/N] "},
		{"a queue", []string{"--queue", "reports", "--yes"}, false, "", exitOK, 1, "1 dead job on queue reports\n", ""},
		{"a kind", []string{"--kind", "email.send", "--yes"}, false, "", exitOK, 1, "replayed 1 job: pending, due now\n", ""},
		{"nothing matches", []string{"--kind", "nothing"}, false, "", exitOK, 0, "0 dead jobs of kind nothing\n", ""},
		{"dry run", []string{"--dry-run"}, false, "", exitOK, 0, "dry run: nothing replayed\n", ""},
		{"dry run lists the dead letters", []string{"--dry-run"}, false, "", exitOK, 0, "ID  QUEUE    KIND           TRIES  DIED", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fx := newFixture(t)
			c := fx.cli(tt.stdin)
			c.stdinTTY, c.stderrTTY = tt.tty, tt.tty
			r := runCLI(t, c, append([]string{"dead", "retry", "--all"}, tt.args...)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.stdout) {
				t.Errorf("stdout %q does not say %q", r.stdout, tt.stdout)
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q does not say %q", r.stderr, tt.stderr)
			}
			q := openFixture(t, fx)
			dead, err := q.List(context.Background(), litequeue.Filter{State: litequeue.Dead})
			if err != nil {
				t.Fatal(err)
			}
			if got := 2 - len(dead); got != tt.replayed {
				t.Errorf("%d jobs replayed, want %d", got, tt.replayed)
			}
		})
	}
}

func TestDeadRetry_Usage(t *testing.T) {
	fx := newFixture(t)
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"dead", "retry"}, "missing job IDs (or --all)"},
		{[]string{"dead", "retry", "2", "--all"}, "give job IDs or --all, not both"},
		{[]string{"dead", "retry", "2", "--kind", "k"}, "the flags that select jobs, such as --queue and --kind, go with --all"},
		{[]string{"dead", "retry", "two"}, `job ID "two" is not a positive whole number`},
		{[]string{"dead", "purge", "--older-than", "a week"}, `"a week" is not a duration`},
		{[]string{"dead", "purge", "extra"}, `unexpected argument "extra"`},
		{[]string{"cancel"}, "missing job IDs (or --all)"},
		{[]string{"cancel", "1", "x"}, `job ID "x" is not a positive whole number`},
	} {
		r := runCLI(t, fx.cli(""), tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.says)
		}
	}
	q := openFixture(t, fx)
	if got := state(t, q, fx.bounced); got != litequeue.Dead {
		t.Errorf("a refused command changed job %d to %s", fx.bounced, got)
	}
}

func TestDeadPurge(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	// The cli's clock stands at epoch+1m: the broken job has been dead
	// for 54s, the bounced one for 52s.
	r := mustRun(t, fx.cli(""), "dead", "purge", "--dry-run")
	if got, want := r.stdout, "2 dead jobs\ndry run: nothing deleted\n"; got != want {
		t.Errorf("dry run: %q, want %q", got, want)
	}
	for older, want := range map[string]string{
		"50s": "2 jobs dead for 50s or more\n",
		"1d":  "0 jobs dead for 1d or more\n",
		"36h": "0 jobs dead for 1d12h or more\n",
	} {
		r := mustRun(t, fx.cli(""), "dead", "purge", "--older-than", older, "--dry-run")
		if !strings.HasPrefix(r.stdout, want) {
			t.Errorf("--older-than %s: %q, want %q first", older, r.stdout, want)
		}
	}
	r = runCLI(t, fx.cli(""), "dead", "purge", "--older-than", "53s")
	if r.code != exitUsage || r.stdout != "1 job dead for 53s or more\n" || !strings.Contains(r.stderr, "refusing to delete 1 job") {
		t.Errorf("without --yes or a terminal: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = mustRun(t, fx.cli(""), "dead", "purge", "--older-than", "53s", "--yes")
	if got, want := r.stdout, "1 job dead for 53s or more\ndeleted 1 dead job\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := q.Get(context.Background(), fx.broken); err == nil {
		t.Errorf("job %d is still there", fx.broken)
	}
	if got := state(t, q, fx.bounced); got != litequeue.Dead {
		t.Errorf("job %d is %s, want still dead", fx.bounced, got)
	}
	c := fx.cli("yes\n")
	c.stdinTTY, c.stderrTTY = true, true
	r = mustRun(t, c, "dead", "purge")
	if got, want := r.stdout, "1 dead job\ndeleted 1 dead job\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	r = mustRun(t, fx.cli(""), "dead", "purge")
	if got, want := r.stdout, "0 dead jobs\n"; got != want {
		t.Errorf("nothing left: %q, want %q", got, want)
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

// answers is the stdin of a terminal where a person answers each question
// with a line, after a while in which something happens to the file: the
// step of that answer, if any.
type answers struct {
	lines []string
	steps []func()
}

func (a *answers) Read(p []byte) (int, error) {
	if len(a.lines) == 0 {
		return 0, io.EOF
	}
	if a.steps[0] != nil {
		a.steps[0]()
	}
	n := copy(p, a.lines[0])
	a.lines, a.steps = a.lines[1:], a.steps[1:]
	return n, nil
}

// dyingApp is an app working on a new file, on the clock clk, whose
// "doomed" jobs die at their first run.
type dyingApp struct {
	path string
	q    *litequeue.Queue
}

func newDyingApp(t *testing.T, clk clock.Clock) *dyingApp {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.db")
	q, err := litequeue.Open(path, litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	q.Handle("doomed", func(context.Context, *litequeue.Job) error { return litequeue.Permanent(errors.New("no")) })
	return &dyingApp{path, q}
}

// die enqueues a doomed job due after delay and runs what is due.
func (a *dyingApp) die(t *testing.T, delay time.Duration) *litequeue.Job {
	t.Helper()
	j, err := a.q.Enqueue(context.Background(), "doomed", nil, litequeue.Delay(delay))
	if err != nil {
		t.Fatal(err)
	}
	a.run(t)
	return j
}

// run runs the jobs due.
func (a *dyingApp) run(t *testing.T) {
	t.Helper()
	if _, err := a.q.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// deadIDs lists the IDs of the dead jobs.
func (a *dyingApp) deadIDs(t *testing.T) []int64 {
	t.Helper()
	jobs, err := a.q.List(context.Background(), litequeue.Filter{State: litequeue.Dead})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// TestDeadRetry_AllAsksAgainWhenJobsDie: "dead retry --all" counts 2 dead
// jobs and asks; while the person reads, a job counted among the pending
// dies, and another. It replays nothing, says so, and asks again for the
// 4; a job that dies after that count is not replayed with the 4.
func TestDeadRetry_AllAsksAgainWhenJobsDie(t *testing.T) {
	app := newDyingApp(t, nil)
	ctx := context.Background()
	later := app.die(t, time.Hour) // pending
	app.die(t, 0)
	app.die(t, 0)
	c := testCLI("")
	c.db, c.stdinTTY, c.stderrTTY = app.path, true, true
	c.stdin = &answers{lines: []string{"y\n", "n\n"}, steps: []func(){func() {
		if err := app.q.RunNow(ctx, later.ID); err != nil {
			t.Fatal(err)
		}
		app.run(t)
		app.die(t, 0)
	}, nil}}
	r := runCLI(t, c, "dead", "retry", "--all", "--kind", "doomed")
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if got, want := r.stdout, "2 dead jobs of kind doomed\n4 dead jobs of kind doomed\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := r.stderr, "Replay 2 dead jobs? [y/N] "+
		"the dead jobs changed after they were counted: 3 match now, not the 2 counted; nothing replayed\n"+
		"Replay 4 dead jobs? [y/N] nothing replayed\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	if got := app.deadIDs(t); len(got) != 4 {
		t.Fatalf("dead jobs %v after nothing was replayed, want 4", got)
	}

	var last *litequeue.Job
	c = testCLI("")
	c.db, c.stdinTTY, c.stderrTTY = app.path, true, true
	c.stdin = &answers{lines: []string{"y\n"}, steps: []func(){func() { last = app.die(t, 0) }}}
	r = mustRun(t, c, "dead", "retry", "--all", "--kind", "doomed")
	if got, want := r.stdout, "4 dead jobs of kind doomed\nreplayed 4 jobs: pending, due now\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if diff := cmp.Diff([]int64{last.ID}, app.deadIDs(t)); diff != "" {
		t.Errorf("dead jobs after the replay of the 4 (-want +got):\n%s", diff)
	}
}

// TestDeadPurge_AsksAgainWhenJobsAge: "dead purge --older-than 1h" counts
// 1 job and asks; while the person reads, another counted job turns an
// hour dead. It deletes nothing, says so, and asks again for the 2.
func TestDeadPurge_AsksAgainWhenJobsAge(t *testing.T) {
	clk := clock.NewMock()
	clk.Set(epoch)
	app := newDyingApp(t, clk)
	app.die(t, 30*time.Minute) // dies at 30m
	app.die(t, 0)
	clk.Add(30 * time.Minute)
	app.run(t)
	clk.Add(30 * time.Minute)
	c := testCLI("")
	c.db, c.clock, c.stdinTTY, c.stderrTTY = app.path, clk, true, true
	c.stdin = &answers{lines: []string{"y\n", "y\n"}, steps: []func(){func() { clk.Add(30 * time.Minute) }, nil}}
	r := mustRun(t, c, "dead", "purge", "--older-than", "1h")
	if got, want := r.stdout, "1 job dead for 1h or more\n2 jobs dead for 1h or more\ndeleted 2 dead jobs\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got, want := r.stderr, "Delete 1 job and its history for good? [y/N] "+
		"the dead jobs changed after they were counted: 2 match now, not the 1 counted; nothing deleted\n"+
		"Delete 2 jobs and their history for good? [y/N] "; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	if got := app.deadIDs(t); len(got) != 0 {
		t.Errorf("dead jobs %v after the purge, want none", got)
	}
}
