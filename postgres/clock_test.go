package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// serverNow reads the clock of the server at dsn.
func serverNow(t *testing.T, dsn string) time.Time {
	t.Helper()
	var now time.Time
	if err := adminDB(t, dsn).QueryRow(`SELECT clock_timestamp()`).Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

// logBuffer is a slog handler's output that goroutines may write and the
// test read at once.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// openChecked opens a Queue on dsn with opts and a mock clock set to the
// server's time, logging into the buffer it returns, which the test
// shows if it fails.
func openChecked(t *testing.T, dsn string, opts litequeue.Options) (*litequeue.Queue, *clock.Mock, *logBuffer) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(serverNow(t, dsn))
	logs := new(logBuffer)
	opts.Clock = clk
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	q, err := postgres.Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		q.Close()
		if t.Failed() {
			t.Logf("the Queue's logs:\n%s", logs)
		}
	})
	return q, clk, logs
}

// wantSkewError checks that err is a *litequeue.ClockSkewError with the
// bound given and a skew of about skew (a mock clock stands still while
// the server's moves on), whose message says so.
func wantSkewError(t *testing.T, err error, skew, bound time.Duration) {
	t.Helper()
	var se *litequeue.ClockSkewError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *litequeue.ClockSkewError", err)
	}
	if se.Bound != bound || (se.Skew-skew).Abs() > time.Minute {
		t.Errorf("ClockSkewError{Skew: %v, Bound: %v}, want a skew of about %v and a bound of %v", se.Skew, se.Bound, skew, bound)
	}
	way := "ahead of"
	if skew < 0 {
		way = "behind"
	}
	for _, want := range []string{se.Skew.Abs().String() + " " + way + " the server's", bound.String()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestRunDue_ClockSkew moves a mock clock, which a bound given makes the
// Queue check, an hour ahead of the server's and an hour behind: RunDue
// refuses to claim, with an error that names the skew and the bound,
// leaves the job pending, and logs the refusal; with the clock back on
// the server's time, it runs the job. A jump while a job runs refuses the
// next one.
func TestRunDue_ClockSkew(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	const bound = 10 * time.Minute
	q, clk, logs := openChecked(t, dsn, litequeue.Options{VisibilityTimeout: time.Hour, MaxClockSkew: bound})
	q.Handle("k", func(ctx context.Context, j *litequeue.Job) error {
		if string(j.Payload) == `"jump"` {
			clk.Add(time.Hour) // as an NTP step would, while the job runs
		}
		return nil
	})

	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		j, err := q.Enqueue(t.Context(), "k", skew.String())
		if err != nil {
			t.Fatal(err)
		}
		clk.Set(serverNow(t, dsn).Add(skew))
		n, err := q.RunDue(t.Context())
		if n != 0 {
			t.Errorf("RunDue with the clock %v off ran %d jobs", skew, n)
		}
		wantSkewError(t, err, skew, bound)
		if j, err := q.Get(t.Context(), j.ID); err != nil || j.State != litequeue.Pending {
			t.Errorf("job after the refusal: %v, %v; want it pending", j, err)
		}
		clk.Set(serverNow(t, dsn))
		if n, err := q.RunDue(t.Context()); n != 1 || err != nil {
			t.Fatalf("RunDue with the clock back = %d, %v; want the job run", n, err)
		}
	}
	// The clock jumps while a job runs: the next job, which RunDue would
	// claim with the first one's end, is refused (and the retention sweep
	// at RunDue's end says so).
	for _, payload := range []string{"jump", "next"} {
		if _, err := q.Enqueue(t.Context(), "k", payload); err != nil {
			t.Fatal(err)
		}
	}
	n, err := q.RunDue(t.Context())
	if n != 1 {
		t.Errorf("RunDue with the clock jumping in the first job ran %d jobs, want 1", n)
	}
	wantSkewError(t, err, time.Hour, bound)

	for _, want := range []string{"level=ERROR", "level=INFO"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack a record at %s:\n%s", want, logs.String())
		}
	}
}

// TestWork_ClockSkew moves a mock clock, checked, an hour ahead while Work
// runs a job: the job's end is recorded, the next job is not claimed
// (neither with the end nor by Work's loop, which logs the refusal), and
// once the clock is back Work runs it.
func TestWork_ClockSkew(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	q, clk, logs := openChecked(t, dsn, litequeue.Options{VisibilityTimeout: time.Hour, MaxClockSkew: 10 * time.Minute})
	var mu sync.Mutex
	ran := map[string]bool{}
	q.Handle("k", func(ctx context.Context, j *litequeue.Job) error {
		mu.Lock()
		ran[string(j.Payload)] = true
		mu.Unlock()
		if string(j.Payload) == `"first"` {
			clk.Add(time.Hour) // as an NTP step would, while the job runs
		}
		return nil
	})
	first, err := q.Enqueue(t.Context(), "k", "first")
	if err != nil {
		t.Fatal(err)
	}
	second, err := q.Enqueue(t.Context(), "k", "second")
	if err != nil {
		t.Fatal(err)
	}
	runWork(t, q, litequeue.WorkerOptions{Concurrency: 1})
	state := func(id int64) litequeue.State {
		j, err := q.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
	waitFor(t, "the first job to complete", func() bool { return state(first.ID) == litequeue.Completed })
	waitFor(t, "Work to log the refusal", func() bool {
		return strings.Contains(logs.String(), `msg="litequeue: work" err="clock skew: the clock reads`)
	})
	mu.Lock()
	ranSecond := ran[`"second"`]
	mu.Unlock()
	if ranSecond || state(second.ID) != litequeue.Pending {
		t.Fatalf("the second job ran with the clock an hour ahead (state %s)", state(second.ID))
	}
	clk.Set(serverNow(t, dsn))
	third, err := q.Enqueue(t.Context(), "k", "third") // wakes Work, which the mock clock does not
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{second.ID, third.ID} {
		waitFor(t, "the jobs to run with the clock back", func() bool { return state(id) == litequeue.Completed })
	}
}

// offsetClock is the real clock, set off by a fixed offset: a machine's
// clock that runs by itself, but wrong.
type offsetClock struct {
	clock.Clock
	offset time.Duration
}

func (c offsetClock) Now() time.Time { return c.Clock.Now().Add(c.offset) }

// TestOpen_ClockSkewDefault: with MaxClockSkew zero, a clock that runs by
// itself is checked against VisibilityTimeout/4 — an hour off is refused,
// and Open logs it as an error — while a mock clock, which only a test
// steps, is not: one in 1970 runs its jobs.
func TestOpen_ClockSkewDefault(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	var logs logBuffer
	q, err := postgres.Open(t.Context(), dsn, litequeue.Options{
		Clock:  offsetClock{clock.New(), time.Hour},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "skew=") {
		t.Errorf("Open with the clock an hour ahead logged no error naming the skew:\n%s", logs.String())
	}
	q.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	_, err = q.RunDue(t.Context())
	wantSkewError(t, err, time.Hour, litequeue.DefaultVisibilityTimeout/4)

	mock := open(t, pgtest.DSN(t), clock.NewMock())
	mock.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
	if _, err := mock.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	if n, err := mock.RunDue(t.Context()); n != 1 || err != nil {
		t.Fatalf("RunDue with a mock clock in 1970 = %d, %v; want the job run", n, err)
	}
}

// TestWork_ClockSkewKeepsFinished starts Work with a mock clock, checked,
// an hour ahead of the server's: its janitor, timed by that clock, purges
// no job, though a finished job is past KeepFinished by it, and logs the
// refusal.
func TestWork_ClockSkewKeepsFinished(t *testing.T) {
	t.Parallel()
	q, clk, logs := openChecked(t, pgtest.DSN(t), litequeue.Options{MaxClockSkew: 5 * time.Second, KeepFinished: 30 * time.Minute})
	q.Handle("k", func(context.Context, *litequeue.Job) error { return nil })
	j, err := q.Enqueue(t.Context(), "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := q.RunDue(t.Context()); n != 1 || err != nil {
		t.Fatalf("RunDue = %d, %v; want the job run", n, err)
	}
	clk.Add(time.Hour)
	runWork(t, q, litequeue.WorkerOptions{})
	waitFor(t, "the janitor to refuse or purge", func() bool {
		s := logs.String()
		return strings.Contains(s, `msg="litequeue: retention" err="clock skew`) || strings.Contains(s, "retention purged")
	})
	if _, err := q.Get(t.Context(), j.ID); err != nil {
		t.Fatalf("the finished job after the janitor ran with the clock an hour ahead: %v", err)
	}
}
