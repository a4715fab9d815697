package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// epoch is where the test databases' mock clocks stand when they are built.
var epoch = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// result is what one run of the command did.
type result struct {
	code           int
	stdout, stderr string
}

// testCLI returns a cli on no terminal, with an empty environment and the
// real clock, reading stdin from the given text.
func testCLI(stdin string) *cli {
	return &cli{
		stdin:  strings.NewReader(stdin),
		getenv: func(string) string { return "" },
		self:   "litequeue",
	}
}

// runCLI runs args on c and returns what it did.
func runCLI(t *testing.T, c *cli, args ...string) result {
	t.Helper()
	var stdout, stderr strings.Builder
	c.stdout, c.stderr = &stdout, &stderr
	code := c.run(context.Background(), args)
	return result{code, stdout.String(), stderr.String()}
}

// mustRun runs args and fails the test unless the command exits 0.
func mustRun(t *testing.T, c *cli, args ...string) result {
	t.Helper()
	r := runCLI(t, c, args...)
	if r.code != exitOK {
		t.Fatalf("litequeue %s: exit %d, stderr:\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// golden compares got with testdata/name, or rewrites the file under
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}

// mailboxError is the error the fixture's mail handler fails with.
type mailboxError struct{ code int }

func (e *mailboxError) Error() string { return fmt.Sprintf("smtp: %d mailbox unavailable", e.code) }

// fixture is a database built on a mock clock, with jobs in every state.
type fixture struct {
	path  string
	clock *clock.Mock
	// step is held, by a send, while the clock moves: a mock's Set fires
	// the timer that starts a run and then sets the time, which must not
	// undo the time that run's handler takes. A channel, not a mutex: a
	// goroutine blocked on a channel lets the bubble's time pass, which
	// Set sleeps on.
	step chan struct{}
	// The jobs, by what happened to them.
	sent, bounced, broken, scheduled, unhandled, discarded, waiting int64
}

// fixturePolicy waits 1s, 2s before the retries of its 3 tries: the
// fixture's Rand draws 0.5, and full jitter halves the 2s, 4s ceilings.
var fixturePolicy = litequeue.Policy{Base: 2 * time.Second, Ceiling: time.Minute, MaxTries: 3}

// newFixture builds the fixture's database in a new directory: each run of
// a handler takes 1.5s on the mock clock. It builds it in a synctest
// bubble, where synctest.Wait tells when Work is idle: every handler has
// returned, and Work sleeps until the next job is due on the mock clock.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{path: filepath.Join(t.TempDir(), "jobs.db")}
	synctest.Test(t, fx.build)
	return fx
}

// build makes the fixture's jobs, and works them with one worker named
// the same on every machine, for the golden files.
func (fx *fixture) build(t *testing.T) {
	fx.clock, fx.step = clock.NewMock(), make(chan struct{}, 1)
	fx.clock.Set(epoch)
	q, err := litequeue.Open(fx.path, litequeue.Options{
		Clock: fx.clock,
		Rand:  func() float64 { return 0.5 },
		Retry: fixturePolicy,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	q.Handle("email.send", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, to string) error {
		fx.take(1500 * time.Millisecond)
		if strings.HasPrefix(to, "bounce") {
			if err := litequeue.Checkpoint(ctx, map[string]int{"tries": job.Attempt}); err != nil {
				return err
			}
			return fmt.Errorf("deliver to %s: %w", to, &mailboxError{550})
		}
		litequeue.Progress(ctx, 1, 1)
		return litequeue.RecordOutput(ctx, map[string]string{"message_id": "m-1." + to})
	}))
	q.Handle("report.render", func(ctx context.Context, job *litequeue.Job) error {
		fx.take(1500 * time.Millisecond)
		return litequeue.Permanent(errors.New(`template "legacy" not found`))
	})
	q.Handle("account.sync", func(ctx context.Context, job *litequeue.Job) error {
		return fmt.Errorf("account 7 was deleted: %w", litequeue.ErrDiscard)
	})
	ctx := t.Context()
	enqueue := func(kind string, payload any, opts ...litequeue.EnqueueOption) int64 {
		t.Helper()
		j, err := q.Enqueue(ctx, kind, payload, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	fx.sent = enqueue("email.send", "ada@example.com")
	fx.bounced = enqueue("email.send", "bounce@example.com", litequeue.Priority(5))
	fx.broken = enqueue("report.render", map[string]any{"template": "legacy", "month": "2026-02"}, litequeue.OnQueue("reports"))
	fx.scheduled = enqueue("email.send", "grace@example.com", litequeue.Delay(time.Hour), litequeue.UniqueKey("digest-grace"))
	fx.unhandled = enqueue("sms.send", map[string]string{"to": "+15550100"})
	fx.discarded = enqueue("account.sync", []byte(`{"account":7}`))
	fx.waiting = enqueue("report.render", []byte("not json"), litequeue.OnQueue("reports"), litequeue.Delay(2*time.Hour))
	fx.work(t, q)
}

// work runs every job due within the next minute, one at a time, stepping
// the clock to the next due job whenever the worker is idle.
func (fx *fixture) work(t *testing.T, q *litequeue.Queue) {
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, litequeue.WorkerOptions{Concurrency: 1, Name: "worker-1"}) }()
	for {
		next, ok := fx.idle(t, q)
		if !ok || next.After(epoch.Add(time.Minute)) {
			break
		}
		fx.step <- struct{}{}
		fx.clock.Set(next)
		<-fx.step
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// take moves the clock on by d, the time a handler takes.
func (fx *fixture) take(d time.Duration) {
	fx.step <- struct{}{}
	fx.clock.Add(d)
	<-fx.step
}

// idle waits until q's worker is idle, with no job running or due on the
// mock clock, and returns when the next job is due (ok false for none).
// The bubble's own time passes while it waits, for the timers of the
// real clock in litequeue's writer; the mock clock stands still.
func (fx *fixture) idle(t *testing.T, q *litequeue.Queue) (next time.Time, ok bool) {
	for {
		synctest.Wait()
		running, err := q.List(t.Context(), litequeue.Filter{State: litequeue.Running})
		if err != nil {
			t.Fatal(err)
		}
		next, ok, err := q.NextDue(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(running) == 0 && (!ok || next.After(fx.clock.Now())) {
			return next, ok
		}
		time.Sleep(time.Millisecond)
	}
}

// cli returns a test cli on the fixture's database, with the clock
// standing a minute after the fixture's epoch.
func (fx *fixture) cli(stdin string) *cli {
	c := testCLI(stdin)
	c.db = fx.path
	c.clock = clock.NewMock()
	c.clock.(*clock.Mock).Set(epoch.Add(time.Minute))
	return c
}

// openFixture opens the fixture's database read-only, closed at the end
// of the test.
func openFixture(t *testing.T, fx *fixture) *litequeue.Queue {
	t.Helper()
	q, err := litequeue.OpenReadOnly(fx.path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}
