package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// A pipeline: each step depends on the one before and reads its output.
// The whole graph is enqueued in one transaction; each step becomes due
// in the commit that completes the one before it.
func ExampleDependsOn() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	// Each step appends its kind to the text its input recorded.
	step := func(ctx context.Context, job *litequeue.Job) error {
		text := "start"
		outs, err := q.DependencyOutputs(ctx, job.ID)
		if err != nil {
			return err
		}
		for id := range outs {
			if err := litequeue.DecodeDependencyOutput(outs, id, &text); err != nil {
				return err
			}
		}
		fmt.Println(job.Kind, "reads", text)
		return litequeue.RecordOutput(ctx, text+"/"+job.Kind)
	}
	for _, kind := range []string{"fetch", "resize", "publish"} {
		q.Handle(kind, step)
	}

	ctx := context.Background()
	var last *litequeue.Job
	err = q.WriteTx(ctx, func(tx *sqlx.Tx) error {
		var deps []litequeue.EnqueueOption
		for _, kind := range []string{"fetch", "resize", "publish"} {
			job, err := q.EnqueueTx(ctx, tx, kind, nil, deps...)
			if err != nil {
				return err
			}
			deps, last = []litequeue.EnqueueOption{litequeue.DependsOn(job.ID)}, job
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("publish is", last.State)
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	done, err := q.Get(ctx, last.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done.State, string(done.Output))
	// Output:
	// publish is waiting
	// fetch reads start
	// resize reads start/fetch
	// publish reads start/fetch/resize
	// completed "start/fetch/resize/publish"
}

// A fan-out and its fan-in: a batch of parts and a callback that runs
// once, when every part has ended, and counts them by their ends.
func ExampleQueue_EnqueueBatch() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	q.Handle("render", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, page int) error {
		if page == 3 {
			return litequeue.Permanent(fmt.Errorf("page %d is corrupt", page))
		}
		return litequeue.RecordOutput(ctx, strings.Repeat("#", page))
	}))
	q.Handle("bind", func(ctx context.Context, job *litequeue.Job) error {
		counts, err := q.DependencyCounts(ctx, job.ID)
		if err != nil {
			return err
		}
		outs, err := q.DependencyOutputs(ctx, job.ID)
		if err != nil {
			return err
		}
		fmt.Println("bind:", counts[litequeue.Completed], "pages rendered,", counts[litequeue.Dead], "dead,", len(outs), "outputs")
		return nil
	})

	ctx := context.Background()
	var pages []litequeue.BatchJob
	for page := 1; page <= 4; page++ {
		pages = append(pages, litequeue.BatchJob{Kind: "render", Payload: page})
	}
	parts, bind, err := q.EnqueueBatch(ctx, litequeue.Batch{Jobs: pages, Callback: litequeue.BatchJob{Kind: "bind"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(parts), "parts; the callback is", bind.State)
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 4 parts; the callback is waiting
	// bind: 3 pages rendered, 1 dead, 3 outputs
}
