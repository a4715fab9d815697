package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// Jobs that died of one cause — here a missing template, a Permanent
// failure — wait among the dead letters with their history until the
// cause is fixed; then ReplayDead puts back those of one kind, with their
// attempt count reset and their history kept. Jobs of other kinds stay
// dead. The command "litequeue dead retry --all --kind invoice.send" does
// the same while the app runs.
func ExampleQueue_ReplayDead() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	fixed := false
	q.Handle("invoice.send", func(ctx context.Context, job *litequeue.Job) error {
		if !fixed {
			return litequeue.Permanent(errors.New("template invoice.html missing"))
		}
		return nil
	})
	q.Handle("sms.send", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.Permanent(errors.New("number unknown"))
	})
	ctx := context.Background()
	for _, kind := range []string{"invoice.send", "invoice.send", "sms.send"} {
		if _, err := q.Enqueue(ctx, kind, nil); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	dead, _ := q.List(ctx, litequeue.Filter{State: litequeue.Dead})
	for _, job := range dead {
		fmt.Printf("dead: job %d %s: %s\n", job.ID, job.Kind, job.LastError)
	}

	fixed = true
	n, err := q.ReplayDead(ctx, litequeue.Filter{Kind: "invoice.send"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("replayed", n)
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	h, _ := q.History(ctx, 1)
	for _, run := range h {
		fmt.Printf("job 1 attempt %d: %s", run.Attempt, run.Outcome)
		if run.Error != "" {
			fmt.Printf(" (%s)", run.Error)
		}
		fmt.Println()
	}
	// Output:
	// dead: job 1 invoice.send: template invoice.html missing
	// dead: job 2 invoice.send: template invoice.html missing
	// dead: job 3 sms.send: number unknown
	// replayed 2
	// job 1 attempt 1: failed (template invoice.html missing)
	// job 1 attempt 0: replayed
	// job 1 attempt 1: completed
}
