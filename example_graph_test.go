package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// Graph reads the jobs connected to one through dependencies; Layers
// puts them in dependency order, as "litequeue flow" and the dashboard's
// graph page show them.
func ExampleGraph_Layers() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	ctx := context.Background()
	enqueue := func(kind string, opts ...litequeue.EnqueueOption) int64 {
		job, err := q.Enqueue(ctx, kind, nil, opts...)
		if err != nil {
			log.Fatal(err)
		}
		return job.ID
	}
	fetch := enqueue("fetch")
	resize := enqueue("resize", litequeue.DependsOn(fetch))
	index := enqueue("index", litequeue.DependsOn(fetch))
	enqueue("publish", litequeue.DependsOn(resize, index))

	g, err := q.Graph(ctx, fetch)
	if err != nil {
		log.Fatal(err)
	}
	for i, layer := range g.Layers() {
		fmt.Print(i, ":")
		for _, n := range layer {
			fmt.Printf(" %d %s (%s)", n.ID, n.Kind, n.State)
		}
		fmt.Println()
	}
	for _, e := range g.Edges {
		fmt.Printf("%d waits for %d: %s, %s\n", e.Job, e.On, e.Rule, e.State)
	}
	// Output:
	// 0: 1 fetch (pending)
	// 1: 2 resize (waiting) 3 index (waiting)
	// 2: 4 publish (waiting)
	// 2 waits for 1: cancel, open
	// 3 waits for 1: cancel, open
	// 4 waits for 2: cancel, open
	// 4 waits for 3: cancel, open
}
