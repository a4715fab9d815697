package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// A test steps through a retry schedule on a mock clock, without sleeping:
// RunDue runs what is due, NextDue says when the next run is, and the clock
// moves there. The fixed draw of 0.5 makes full jitter wait half of each
// ceiling: 1s, 2s, 4s.
func ExampleQueue_NextDue() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{
		Clock: clk,
		Rand:  func() float64 { return 0.5 },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	start := clk.Now()
	q.Handle("sync", func(ctx context.Context, job *litequeue.Job) error {
		fmt.Printf("+%v attempt %d\n", clk.Now().Sub(start), job.Attempt)
		if job.Attempt < 4 {
			return errors.New("server busy")
		}
		return nil
	})
	ctx := context.Background()
	if _, err := q.Enqueue(ctx, "sync", nil); err != nil {
		log.Fatal(err)
	}
	for {
		if _, err := q.RunDue(ctx); err != nil {
			log.Fatal(err)
		}
		next, ok, err := q.NextDue(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break // nothing left to run
		}
		clk.Set(next)
	}
	// Output:
	// +0s attempt 1
	// +1s attempt 2
	// +3s attempt 3
	// +7s attempt 4
}

// What a handler returns decides what happens to its job: nil completes it,
// an error retries it after the policy's wait, RetryAfter after a wait of
// its own, Snooze runs it again later without using a try, Permanent kills
// it at once, and ErrDiscard drops it as input that can never succeed.
func ExampleHandler() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{
		Clock: clk,
		Rand:  func() float64 { return 0.5 },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	results := map[string]error{
		"ok":          nil,
		"error":       errors.New("connection refused"),
		"retry-after": litequeue.RetryAfter(time.Minute, errors.New("429 too many requests")),
		"snooze":      litequeue.Snooze(time.Hour),
		"permanent":   litequeue.Permanent(errors.New("400 bad request")),
		"discard":     fmt.Errorf("account 42 deleted: %w", litequeue.ErrDiscard),
	}
	q.Handle("call", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, result string) error {
		return results[result]
	}))
	ctx := context.Background()
	var ids []int64
	for _, result := range []string{"ok", "error", "retry-after", "snooze", "permanent", "discard"} {
		job, err := q.Enqueue(ctx, "call", result)
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, job.ID)
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "returned\toutcome\tstate\tnext run in\ttries used")
	for _, id := range ids {
		job, _ := q.Get(ctx, id)
		h, _ := q.History(ctx, id)
		next := "-"
		if job.State == litequeue.Pending {
			next = job.RunAt.Sub(clk.Now()).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d of %d\n", job.Payload, h[len(h)-1].Outcome, job.State, next, job.Attempt, job.MaxTries)
	}
	tw.Flush()
	// Output:
	// returned       outcome    state      next run in  tries used
	// "ok"           completed  completed  -            1 of 8
	// "error"        failed     pending    1s           1 of 8
	// "retry-after"  failed     pending    1m0s         1 of 8
	// "snooze"       snoozed    pending    1h0m0s       0 of 8
	// "permanent"    failed     dead       -            1 of 8
	// "discard"      discarded  discarded  -            1 of 8
}

// A handler snoozes while what it needs is not there yet — here, a device
// that is offline for its first two checks. Snoozing uses no try: the run
// after it carries the same attempt number.
func ExampleSnooze() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	start, checks := clk.Now(), 0
	q.Handle("firmware.push", func(ctx context.Context, job *litequeue.Job) error {
		checks++
		fmt.Printf("+%v attempt %d: ", clk.Now().Sub(start), job.Attempt)
		if checks <= 2 {
			fmt.Println("device offline, snooze 30s")
			return litequeue.Snooze(30 * time.Second)
		}
		fmt.Println("pushed")
		return nil
	})
	ctx := context.Background()
	job, err := q.Enqueue(ctx, "firmware.push", nil)
	if err != nil {
		log.Fatal(err)
	}
	for range 3 {
		if _, err := q.RunDue(ctx); err != nil {
			log.Fatal(err)
		}
		clk.Add(30 * time.Second)
	}
	h, _ := q.History(ctx, job.ID)
	for _, run := range h {
		fmt.Println(run.Attempt, run.Outcome)
	}
	// Output:
	// +0s attempt 1: device offline, snooze 30s
	// +30s attempt 1: device offline, snooze 30s
	// +1m0s attempt 1: pushed
	// 1 snoozed
	// 1 snoozed
	// 1 completed
}

// A handler that was told when to come back — an HTTP 429 with a
// Retry-After header, say — returns RetryAfter: the next run comes exactly
// that long after this one ends, without jitter. The run still uses a try.
func ExampleRetryAfter() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	start := clk.Now()
	q.Handle("webhook", func(ctx context.Context, job *litequeue.Job) error {
		fmt.Printf("+%v attempt %d\n", clk.Now().Sub(start), job.Attempt)
		if job.Attempt == 1 {
			return litequeue.RetryAfter(90*time.Second, errors.New("429 too many requests"))
		}
		return nil
	})
	ctx := context.Background()
	job, err := q.Enqueue(ctx, "webhook", nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	job, _ = q.Get(ctx, job.ID)
	fmt.Printf("%s, due at +%v: %s\n", job.State, job.RunAt.Sub(start), job.LastError)
	clk.Set(job.RunAt)
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// +0s attempt 1
	// pending, due at +1m30s: 429 too many requests
	// +1m30s attempt 2
}
