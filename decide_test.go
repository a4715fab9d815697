package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

type customError struct{ msg string }

func (e *customError) Error() string { return e.msg }

// TestQueue_Outcomes runs one job per kind of handler ending through one
// RunDue and checks the job and the history row each leaves.
func TestQueue_Outcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		ret       error
		state     litequeue.State
		outcome   litequeue.Outcome
		class     string
		delay     time.Duration
		attempt   int // after the run
		lastError string
		event     string
	}{
		{"nil completes", nil, litequeue.Completed, litequeue.OutcomeCompleted, "", 0, 1, "", "job.completed"},
		{"error retries after the policy's delay", errors.New("down"), litequeue.Pending, litequeue.OutcomeFailed, "*errors.errorString", 10 * time.Second, 1, "down", "job.retry"},
		{"wrapped error names the innermost type", fmt.Errorf("call: %w", &customError{"refused"}), litequeue.Pending, litequeue.OutcomeFailed, "*litequeue_test.customError", 10 * time.Second, 1, "call: refused", "job.retry"},
		{"RetryAfter sets the delay exactly", litequeue.RetryAfter(1234567*time.Microsecond, errors.New("429")), litequeue.Pending, litequeue.OutcomeFailed, "*errors.errorString", 1234 * time.Millisecond, 1, "429", "job.retry"},
		{"RetryAfter is clamped to 24h", litequeue.RetryAfter(48*time.Hour, errors.New("later")), litequeue.Pending, litequeue.OutcomeFailed, "*errors.errorString", 24 * time.Hour, 1, "later", "job.retry"},
		{"Permanent goes to dead at once", litequeue.Permanent(errors.New("bad input")), litequeue.Dead, litequeue.OutcomeFailed, "*errors.errorString", 0, 1, "bad input", "job.dead"},
		{"ErrDiscard discards", fmt.Errorf("account gone: %w", litequeue.ErrDiscard), litequeue.Discarded, litequeue.OutcomeDiscarded, "*errors.errorString", 0, 1, "", "job.discarded"},
		{"Snooze uses no try", litequeue.Snooze(5 * time.Minute), litequeue.Pending, litequeue.OutcomeSnoozed, "", 5 * time.Minute, 0, "", "job.snoozed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			var ev events
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy, OnEvent: ev.record})
			q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
				clk.Add(1500 * time.Millisecond) // the run takes 1.5s
				return tt.ret
			})
			job := enqueue(t, q, "k", nil)
			if got := runDue(t, q); got != 1 {
				t.Fatalf("RunDue ran %d, want 1", got)
			}
			end := epoch.Add(1500 * time.Millisecond)
			got := get(t, q, job.ID)
			if got.State != tt.state || got.Attempt != tt.attempt || got.LastError != tt.lastError {
				t.Errorf("job: state %s attempt %d last error %q, want %s %d %q", got.State, got.Attempt, got.LastError, tt.state, tt.attempt, tt.lastError)
			}
			switch {
			case tt.state == litequeue.Pending:
				if want := end.Add(tt.delay); !got.RunAt.Equal(want) {
					t.Errorf("RunAt = %v, want %v (end of run + delay)", got.RunAt, want)
				}
			case tt.state == litequeue.Completed:
				if !got.RunAt.IsZero() {
					t.Errorf("completed job has RunAt %v, want zero", got.RunAt)
				}
				fallthrough
			default:
				if !got.FinishedAt.Equal(end) {
					t.Errorf("FinishedAt = %v, want %v", got.FinishedAt, end)
				}
			}
			h := history(t, q, job.ID)
			if len(h) != 1 {
				t.Fatalf("history has %d rows, want 1: %+v", len(h), h)
			}
			want := litequeue.Attempt{
				Attempt: 1, StartedAt: epoch, FinishedAt: end, Outcome: tt.outcome,
				Error: errText(tt.ret, tt.outcome), ErrorClass: tt.class, Delay: tt.delay, Worker: h[0].Worker,
			}
			if diff := cmp.Diff(want, h[0]); diff != "" {
				t.Errorf("history row (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"job.enqueued", "job.started", tt.event}, ev.types()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func errText(err error, o litequeue.Outcome) string {
	if err == nil || o == litequeue.OutcomeSnoozed {
		return ""
	}
	return err.Error()
}

// TestQueue_SnoozeKeepsAttempt checks that the run after a snooze carries
// the same Attempt number and that snoozes never make a job dead.
func TestQueue_SnoozeKeepsAttempt(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: litequeue.Policy{MaxTries: 1}})
	var attempts []int
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		attempts = append(attempts, job.Attempt)
		if len(attempts) < 4 {
			return litequeue.Snooze(time.Second)
		}
		return nil
	})
	job := enqueue(t, q, "k", nil)
	for range 4 {
		runDue(t, q)
		clk.Add(time.Second)
	}
	if diff := cmp.Diff([]int{1, 1, 1, 1}, attempts); diff != "" {
		t.Fatalf("attempts (-want +got):\n%s", diff)
	}
	if got := get(t, q, job.ID).State; got != litequeue.Completed {
		t.Fatalf("state = %s, want completed", got)
	}
}

// TestQueue_RetryScheduleToDead steps a job that always fails through its
// whole schedule with NextDue and RunDue, checking each run time, the
// history and the events.
func TestQueue_RetryScheduleToDead(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{
		Clock:   clk,
		Retry:   litequeue.Policy{Base: time.Second, Ceiling: 5 * time.Second, MaxTries: 5, Jitter: litequeue.NoJitter},
		OnEvent: ev.record,
	})
	var runs []time.Time
	q.Handle("flaky", func(ctx context.Context, job *litequeue.Job) error {
		runs = append(runs, clk.Now())
		return errors.New("boom")
	}, litequeue.WithTimeout(0))
	ctx := t.Context()
	job := enqueue(t, q, "flaky", map[string]int{"n": 1})

	for {
		next, ok, err := q.NextDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		clk.Set(next)
		if got := runDue(t, q); got != 1 {
			t.Fatalf("RunDue at %v ran %d jobs, want 1", next, got)
		}
	}
	// Retries after attempts 1…4 wait 1s, 2s, 4s, then 5s (the ceiling).
	wantDelays := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 0}
	var want []time.Time
	at := epoch
	for _, d := range wantDelays {
		want = append(want, at)
		at = at.Add(d)
	}
	if diff := cmp.Diff(want, runs); diff != "" {
		t.Fatalf("run times (-want +got):\n%s", diff)
	}
	got := get(t, q, job.ID)
	if got.State != litequeue.Dead || got.Attempt != 5 || got.LastError != "boom" || !got.FinishedAt.Equal(want[4]) {
		t.Fatalf("job = %+v, want dead after 5 attempts with last error boom", got)
	}
	worker := workerName(t, q, job.ID)
	var wantHist []litequeue.Attempt
	for i, d := range wantDelays {
		wantHist = append(wantHist, litequeue.Attempt{
			Attempt: i + 1, StartedAt: want[i], FinishedAt: want[i], Outcome: litequeue.OutcomeFailed,
			Error: "boom", ErrorClass: "*errors.errorString", Delay: d, Worker: worker,
		})
	}
	if diff := cmp.Diff(wantHist, history(t, q, job.ID)); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	wantTypes := []string{"job.enqueued"}
	for range 4 {
		wantTypes = append(wantTypes, "job.started", "job.retry")
	}
	wantTypes = append(wantTypes, "job.started", "job.dead")
	if diff := cmp.Diff(wantTypes, ev.types()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

// TestQueue_ErrorTextBounded: a handler that returns an error of 2 MiB, or
// panics with a value of 2 MiB, has at most MaxErrorText bytes of it stored:
// a prefix cut at a UTF-8 boundary and marked with the full length, the
// same text in last_error and in the last run's history row, and so in
// every history row and event. 20
// such jobs, each run twice, keep the file small.
func TestQueue_ErrorTextBounded(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, path := openQueue(t, litequeue.Options{
		Clock:   clk,
		Retry:   litequeue.Policy{Backoff: litequeue.Constant, Base: time.Second, Ceiling: time.Second, MaxTries: 2},
		OnEvent: ev.record,
	})
	// Runes of 3 bytes after 0, 1 or 2 bytes of ASCII: whatever byte the
	// text is cut at, one of the three cuts falls inside a rune.
	huge := func(n int64) string { return strings.Repeat("a", int(n%3)) + strings.Repeat("€", 2<<20/3) }
	q.Handle("huge", func(ctx context.Context, job *litequeue.Job) error {
		return errors.New(huge(job.ID))
	})
	q.Handle("panics", func(ctx context.Context, job *litequeue.Job) error {
		panic(huge(job.ID))
	})
	full := map[int64]int{} // the ID of each job: the length of its handler's error, or -1 for a panic
	for range 20 {
		j := enqueue(t, q, "huge", nil)
		full[j.ID] = len(huge(j.ID))
	}
	full[enqueue(t, q, "panics", nil).ID] = -1
	runDue(t, q)
	clk.Add(time.Minute)
	runDue(t, q)

	cut := regexp.MustCompile(`…\[cut: ([0-9]+) bytes in all\]$`)
	for id, n := range full {
		got := get(t, q, id)
		if got.State != litequeue.Dead {
			t.Fatalf("job %d: state %s, want dead", id, got.State)
		}
		text := got.LastError
		m := cut.FindStringSubmatch(text)
		if m == nil || len(text) > litequeue.MaxErrorText || !utf8.ValidString(text) {
			t.Fatalf("job %d: last error of %d bytes (valid UTF-8: %v), ending %q; want at most %d bytes of UTF-8, marked as cut",
				id, len(text), utf8.ValidString(text), text[max(0, len(text)-60):], litequeue.MaxErrorText)
		}
		if all, _ := strconv.Atoi(m[1]); n >= 0 && all != n || n < 0 && all <= 2<<20 {
			t.Errorf("job %d: the mark says %s bytes in all, want %d", id, m[1], n)
		}
		kept := strings.TrimSuffix(text, m[0])
		if want := "panic: " + huge(id); n >= 0 && !strings.HasPrefix(huge(id), kept) || n < 0 && !strings.HasPrefix(want, kept) {
			t.Errorf("job %d: the text kept is not a prefix of the error", id)
		}
		if len(kept) < litequeue.MaxErrorText-100 {
			t.Errorf("job %d: %d bytes kept of %d allowed", id, len(kept), litequeue.MaxErrorText)
		}
		hist := history(t, q, id)
		for i, h := range hist {
			if len(h.Error) > litequeue.MaxErrorText || !cut.MatchString(h.Error) {
				t.Errorf("job %d: history row %d holds %d bytes of error, want at most %d, marked as cut", id, i, len(h.Error), litequeue.MaxErrorText)
			}
		}
		if last := hist[len(hist)-1].Error; last != text {
			t.Errorf("job %d: the last history row holds %d bytes of error, not the last error's %d", id, len(last), len(text))
		}
	}
	ev.mu.Lock()
	for _, e := range ev.list {
		if (e.Type == "job.retry" || e.Type == "job.dead") && (len(e.Err) > litequeue.MaxErrorText || !cut.MatchString(e.Err)) {
			t.Errorf("event %s of job %d: Err of %d bytes, want at most %d, marked as cut", e.Type, e.Job.ID, len(e.Err), litequeue.MaxErrorText)
		}
	}
	ev.mu.Unlock()

	if onPostgres {
		return
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	// 21 last errors and 42 history rows of at most 16 KiB each.
	if limit := int64(2 << 20); size > limit {
		t.Errorf("the file and its -wal hold %d bytes after 21 jobs, want at most %d", size, limit)
	}
	t.Logf("21 jobs, 63 error texts: %d bytes of file", size)
}
