package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// The ends of the last minutes, per minute, for a chart: Throughput reads
// a few counting rows per minute, not the jobs' history, and returns every
// minute of the window, those without an end too.
func ExampleQueue_Throughput() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clk,
		Retry: litequeue.Policy{Base: time.Minute, Ceiling: time.Minute, MaxTries: 2, Jitter: litequeue.NoJitter}})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error { return nil })
	q.Handle("report.render", func(ctx context.Context, job *litequeue.Job) error { return errors.New("no data") })
	for _, kind := range []string{"email.send", "email.send", "report.render"} {
		if _, err := q.Enqueue(ctx, kind, nil); err != nil {
			log.Fatal(err)
		}
	}
	q.RunDue(ctx) // 12:00: two emails sent, the report retried
	clk.Add(time.Minute)
	q.RunDue(ctx) // 12:01: the report's last try: dead
	clk.Add(time.Minute)

	points, err := q.Throughput(ctx, 3*time.Minute, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range points {
		fmt.Printf("%s completed %d, retried %d, dead %d\n", p.Start.UTC().Format("15:04"), p.Completed, p.Retried, p.Dead)
	}
	// Output:
	// 12:00 completed 2, retried 1, dead 0
	// 12:01 completed 0, retried 0, dead 1
	// 12:02 completed 0, retried 0, dead 0
}
