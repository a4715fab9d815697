package litequeuetest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/litequeuetest"
)

// exampleT stands in for the *testing.T that a test passes, which an
// Example has none of: it has the methods that package litequeuetest
// calls, and fails by panicking with the message.
type exampleT struct{ testing.TB }

func (exampleT) Helper()                           {}
func (exampleT) Context() context.Context          { return context.Background() }
func (exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// A test of a signup that sends a welcome email: Drain runs the signup
// and its retry, moving the mock clock past the backoff, and
// RequireEnqueued finds the email it enqueued. In a test, pass its
// *testing.T where this passes t.
func ExampleDrain() {
	t := exampleT{}
	dir, _ := os.MkdirTemp("", "litequeuetest-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clk, Rand: func() float64 { return 0.5 }})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.Handle("signup", func(ctx context.Context, job *litequeue.Job) error {
		if job.Attempt == 1 {
			return errors.New("the user store is busy")
		}
		var email string
		if err := job.Decode(&email); err != nil {
			return err
		}
		_, err := q.Enqueue(ctx, "email.welcome", email)
		return err
	})
	if _, err := q.Enqueue(t.Context(), "signup", "ada@example.com"); err != nil {
		log.Fatal(err)
	}

	runs := litequeuetest.Drain(t, q, clk)
	welcome := litequeuetest.RequireEnqueued(t, q, "email.welcome", litequeuetest.Payload("ada@example.com"))
	fmt.Println("runs:", runs, "at", clk.Now().Format(time.TimeOnly))
	fmt.Println("welcome:", welcome.State, string(welcome.Payload))
	// Output:
	// runs: 2 at 09:00:01
	// welcome: pending "ada@example.com"
}
