package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// A handler reports how far it is as often as it likes: the reports are
// written coalesced, and Get, List, litequeue show and list, and the
// dashboard's job page show the latest.
func ExampleProgress() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	q.Handle("reindex", func(ctx context.Context, job *litequeue.Job) error {
		const rows = 10_000
		for done := 1; done <= rows; done++ {
			litequeue.Progress(ctx, done, rows) // a write or two, not ten thousand
		}
		return nil
	})

	ctx := context.Background()
	job, err := q.Enqueue(ctx, "reindex", nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	done, err := q.Get(ctx, job.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.State, done.Progress)
	// Output:
	// completed 10000 of 10000 (100%)
}
