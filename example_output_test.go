package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// Thumbnail is the output of the kind "image.resize".
type Thumbnail struct {
	URL   string `json:"url"`
	Width int    `json:"width"`
}

// A handler records its result with RecordOutput; it is stored in the
// commit that completes the job, and Get reads it back.
func ExampleRecordOutput() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	resize := litequeue.NewKind[string]("image.resize")
	resize.Handle(q, func(ctx context.Context, job *litequeue.Job, path string) error {
		return litequeue.RecordOutput(ctx, Thumbnail{URL: "https://cdn.example.com/thumbs/" + path, Width: 320})
	})

	ctx := context.Background()
	job, err := resize.Enqueue(ctx, q, "cat.jpg")
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
	var thumb Thumbnail
	if err := done.DecodeOutput(&thumb); err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.State, string(done.Output))
	fmt.Println(thumb.URL, thumb.Width)
	fmt.Println(litequeue.RecordOutput(ctx, thumb)) // outside a handler's run
	// Output:
	// completed {"url":"https://cdn.example.com/thumbs/cat.jpg","width":320}
	// https://cdn.example.com/thumbs/cat.jpg 320
	// litequeue: record output: the context is not a handler's (call it with the ctx a handler is given, during its run)
}
