package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// Stats reads counts that the database keeps beside the jobs, in the
// transaction of every change, also of a write that bypasses litequeue's
// API (here a DELETE with the app's own pool). RecountJobs counts the
// jobs anew and rewrites the counts only where they differ: 0 here.
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
	s, err := q.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("due:", s.Queues["default"].Due)
	changed, err := q.RecountJobs(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("counts rewritten:", changed)
	// Output:
	// due: 2
	// counts rewritten: 0
}
