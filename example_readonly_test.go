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

// A dashboard, a health check or a support tool opens the file read-only,
// beside the app that works on it: it reads jobs, histories and counts, and
// every method that would write returns ErrReadOnly.
func ExampleOpenReadOnly() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.db")
	clk := clock.NewMock()
	app, err := litequeue.Open(path, litequeue.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer app.Close()
	ctx := context.Background()
	for _, queue := range []string{"mail", "mail", "reports"} {
		if _, err := app.Enqueue(ctx, "work", nil, litequeue.OnQueue(queue)); err != nil {
			log.Fatal(err)
		}
	}

	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{Clock: clk})
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	st, err := ro.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("mail due:", st.Queues["mail"].Due, "reports due:", st.Queues["reports"].Due)
	_, err = ro.Enqueue(ctx, "work", nil)
	fmt.Println(errors.Is(err, litequeue.ErrReadOnly))
	// Output:
	// mail due: 2 reports due: 1
	// true
}
