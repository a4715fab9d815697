package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/litequeue/litequeue"
)

// The run a running job is in, as a job's page shows it: its worker,
// start, lease deadline and timeout. (The kinds a process handles and
// their limits: ExampleQueue_Limits.)
func ExampleQueue_CurrentRun() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()

	started, release := make(chan int64), make(chan struct{})
	q.Handle("thumbnail", func(ctx context.Context, job *litequeue.Job) error {
		started <- job.ID
		<-release
		return nil
	}, litequeue.WithTimeout(30*time.Second))

	if _, err := q.Enqueue(ctx, "thumbnail", "cat.png"); err != nil {
		log.Fatal(err)
	}
	done := make(chan error)
	go func() { _, err := q.RunDue(ctx); done <- err }()
	id := <-started

	run, running, err := q.CurrentRun(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("running:", running, "timeout:", run.Timeout, "lease after start:", run.LeaseUntil.After(run.StartedAt))

	close(release)
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	_, running, _ = q.CurrentRun(ctx, id)
	fmt.Println("running once done:", running)
	// Output:
	// running: true timeout: 30s lease after start: true
	// running once done: false
}

// An age as the command and the dashboard show it.
func ExampleFormatAge() {
	for _, d := range []time.Duration{870123 * time.Microsecond, 23874 * time.Millisecond, 15*time.Minute + 23874*time.Millisecond, 26 * time.Hour} {
		fmt.Println(litequeue.FormatAge(d))
	}
	// Output:
	// 870ms
	// 23.9s
	// 15m24s
	// 1d2h
}

// The circuit breakers as the dashboard shows them: closed until failures
// open one, closed again by a reset.
func ExampleQueue_Breakers() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	q.Handle("partner.sync", func(context.Context, *litequeue.Job) error {
		return errors.New("503 from the partner")
	}, litequeue.WithBreaker(litequeue.Breaker{Failures: 2}))

	show := func(when string) {
		breakers, err := q.Breakers(ctx)
		if err != nil {
			log.Fatal(err)
		}
		b := breakers["partner.sync"]
		fmt.Printf("%s: %s, trips %d\n", when, b.State, b.Trips)
	}
	show("at first")
	for range 2 {
		if _, err := q.Enqueue(ctx, "partner.sync", nil, litequeue.MaxTries(1)); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	show("after two failures")
	if err := q.ResetBreaker(ctx, "partner.sync"); err != nil {
		log.Fatal(err)
	}
	show("after the reset")
	// Output:
	// at first: closed, trips 0
	// after two failures: open, trips 1
	// after the reset: closed, trips 0
}
