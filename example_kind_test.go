package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/litequeue/litequeue"
)

// Email is the payload of the kind "email.welcome".
type Email struct {
	To   string `json:"to"`
	Name string `json:"name"`
}

// A typed kind names its payload's type once: its handler is given an
// Email, and an Enqueue of anything else does not compile.
func ExampleNewKind() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	welcome := litequeue.NewKind[Email]("email.welcome") // usually a package-level var
	welcome.Handle(q, func(ctx context.Context, job *litequeue.Job, e Email) error {
		fmt.Printf("welcome, %s <%s>\n", e.Name, e.To)
		return nil
	})

	ctx := context.Background()
	job, err := welcome.Enqueue(ctx, q, Email{To: "ada@example.com", Name: "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	e, err := welcome.Args(job)
	fmt.Printf("job %d of kind %s for %s, %v\n", job.ID, job.Kind, e.To, err)
	if _, err := welcome.EnqueueMany(ctx, q, []Email{{To: "alan@example.com", Name: "Alan"}}); err != nil {
		log.Fatal(err)
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// job 1 of kind email.welcome for ada@example.com, <nil>
	// welcome, Ada <ada@example.com>
	// welcome, Alan <alan@example.com>
}
