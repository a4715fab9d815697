package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// A cancel of many jobs that a person confirms: TallyCancel counts the
// jobs a Filter selects, the person agrees to that number, and
// CancelTallied cancels those counted — or none, if they changed in
// between. DeleteTallied then deletes the cancelled jobs the same way.
// The command "litequeue cancel --all --kind report.render" and "litequeue
// delete --all --state cancelled" do the same while the app runs.
func ExampleQueue_CancelTallied() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	for _, kind := range []string{"report.render", "report.render", "email.send"} {
		if _, err := q.Enqueue(ctx, kind, nil); err != nil {
			log.Fatal(err)
		}
	}

	f := litequeue.Filter{State: litequeue.Pending, Kind: "report.render"}
	t, err := q.TallyCancel(ctx, f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cancel %d jobs? yes\n", t.Jobs)
	n, err := q.CancelTallied(ctx, f, t)
	if err != nil {
		log.Fatal(err) // a *TallyError if the jobs changed since the count
	}
	fmt.Println("cancelled", n)

	f = litequeue.Filter{State: litequeue.Cancelled}
	t, _ = q.TallyDelete(ctx, f)
	n, _ = q.DeleteTallied(ctx, f, t)
	fmt.Println("deleted", n)
	left, _ := q.List(ctx, litequeue.Filter{})
	for _, job := range left {
		fmt.Println("left:", job.Kind, job.State)
	}
	// Output:
	// cancel 2 jobs? yes
	// cancelled 2
	// deleted 2
	// left: email.send pending
}

// A long bulk act reports how far it has got through a context of
// WithProgress: here a cancel of 1200 jobs, in transactions of 500.
func ExampleWithProgress() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	if _, err := q.EnqueueMany(ctx, "newsletter.send", make([]any, 1200)); err != nil {
		log.Fatal(err)
	}

	f := litequeue.Filter{State: litequeue.Pending}
	t, _ := q.TallyCancel(ctx, f)
	pctx := litequeue.WithProgress(ctx, func(done, total int) {
		fmt.Printf("%d/%d\n", done, total)
	})
	if _, err := q.CancelTallied(pctx, f, t); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 500/1200
	// 1000/1200
	// 1200/1200
}

// SchemaSQL is the SQL of litequeue's tables in a file, to review.
func ExampleSchemaSQL() {
	first, _, _ := strings.Cut(litequeue.SchemaSQL(), "\n")
	fmt.Println(strings.Contains(first, "litequeue schema"))
	fmt.Println(strings.Contains(litequeue.SchemaSQL(), "CREATE TABLE IF NOT EXISTS litequeue_jobs"))
	// Output:
	// true
	// true
}
