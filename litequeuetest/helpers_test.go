package litequeuetest_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// epoch is where the tests' mock clocks start.
var epoch = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// openQueue opens a queue on a new file in t.TempDir, on a mock clock set
// to epoch and with no jitter unless opts says otherwise, closed at the end
// of the test.
func openQueue(t *testing.T, opts litequeue.Options) (*litequeue.Queue, *clock.Mock) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	opts.Clock = clk
	if opts.Retry.Jitter == "" {
		opts.Retry.Jitter = litequeue.NoJitter
	}
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "queue.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { q.Close() })
	return q, clk
}

// enqueue adds a job and fails the test on error.
func enqueue(t *testing.T, q *litequeue.Queue, kind string, payload any, opts ...litequeue.EnqueueOption) *litequeue.Job {
	t.Helper()
	j, err := q.Enqueue(t.Context(), kind, payload, opts...)
	if err != nil {
		t.Fatalf("Enqueue(%q): %v", kind, err)
	}
	return j
}

// get reads a job and fails the test on error.
func get(t *testing.T, q *litequeue.Queue, id int64) *litequeue.Job {
	t.Helper()
	j, err := q.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("Get(%d): %v", id, err)
	}
	return j
}

// recorder is a testing.TB that records the failures reported to it
// instead of failing the test, to test that the helpers fail tests. Its
// other methods are those of the real test.
type recorder struct {
	testing.TB
	failures []string // each as "Fatalf: message"
}

func record(t *testing.T) *recorder { return &recorder{TB: t} }

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, "Fatalf: "+fmt.Sprintf(format, args...))
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, "Errorf: "+fmt.Sprintf(format, args...))
}

func (r *recorder) Fatal(args ...any) { r.failures = append(r.failures, "Fatal: "+fmt.Sprint(args...)) }
func (r *recorder) Error(args ...any) { r.failures = append(r.failures, "Error: "+fmt.Sprint(args...)) }
func (r *recorder) FailNow()          { r.failures = append(r.failures, "FailNow") }
func (r *recorder) Fail()             { r.failures = append(r.failures, "Fail") }

// passed fails the test if anything failed r.
func (r *recorder) passed(t *testing.T) {
	t.Helper()
	if len(r.failures) > 0 {
		t.Fatalf("want no failure, got %d:\n%s", len(r.failures), strings.Join(r.failures, "\n"))
	}
}

// failed fails the test unless r saw exactly one failure, reported with
// Fatalf so that a real test stops there, whose message holds each of
// wants. It returns the message.
func (r *recorder) failed(t *testing.T, wants ...string) string {
	t.Helper()
	if len(r.failures) != 1 {
		t.Fatalf("want one failure, got %d:\n%s", len(r.failures), strings.Join(r.failures, "\n"))
	}
	msg, ok := strings.CutPrefix(r.failures[0], "Fatalf: ")
	if !ok {
		t.Fatalf("want a failure by Fatalf, got %s", r.failures[0])
	}
	t.Logf("the failure, as a test would report it:\n%s", msg)
	for _, want := range wants {
		if !strings.Contains(msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, msg)
		}
	}
	return msg
}
