package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// Stats reads counts that the Queue keeps beside the jobs, in the
// transaction of each of its changes. A write that bypasses litequeue's
// API (here a DELETE with the app's own pool) goes uncounted on a file:
// RecountJobs counts the jobs anew and rewrites the counts where they
// differ, here the one group of the job deleted.
func ExampleQueue_RecountJobs() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	if _, err := q.EnqueueMany(ctx, "email.send", make([]any, 3)); err != nil {
		log.Fatal(err)
	}
	if _, err := q.DB().Exec(`DELETE FROM litequeue_jobs WHERE id = 1`); err != nil {
		log.Fatal(err)
	}
	due := func() int {
		s, err := q.Stats(ctx)
		if err != nil {
			log.Fatal(err)
		}
		return s.Queues["default"].Due
	}
	fmt.Println("due before:", due())
	changed, err := q.RecountJobs(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("counts rewritten:", changed)
	fmt.Println("due after:", due())
	// Output:
	// due before: 3
	// counts rewritten: 1
	// due after: 2
}
