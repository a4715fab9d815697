package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// Periodics shows each schedule's next slot and, once that slot is due
// and no process has fired it yet, its lag: a lag that keeps growing says
// that no worker runs the schedule.
func ExampleQueue_Periodics() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 9, 10, 0, 0, time.UTC))
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.Handle("report.build", func(ctx context.Context, job *litequeue.Job) error { return nil })
	ctx := context.Background()
	if err := q.Periodic(ctx, "quarter-hourly", "*/15 * * * *", "report.build", nil); err != nil {
		log.Fatal(err)
	}
	show := func() {
		infos, err := q.Periodics(ctx)
		if err != nil {
			log.Fatal(err)
		}
		for _, p := range infos {
			fmt.Printf("%s at %s: next %s, lag %v\n", p.Name, clk.Now().Format(time.TimeOnly), p.NextSlot.Format(time.TimeOnly), p.Lag)
		}
	}
	show()
	clk.Add(6 * time.Minute) // 09:16: the slot of 09:15 is due, unfired
	show()
	if _, err := q.RunDue(ctx); err != nil { // fires it, and runs its job
		log.Fatal(err)
	}
	show()
	// Output:
	// quarter-hourly at 09:10:00: next 09:15:00, lag 0s
	// quarter-hourly at 09:16:00: next 09:15:00, lag 1m0s
	// quarter-hourly at 09:16:00: next 09:30:00, lag 0s
}
