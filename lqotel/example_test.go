package lqotel_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/lqotel"
)

// The enqueue middleware traces every job made, with no option on the
// Enqueue call; with ChildRuns, each run is a child of its job's enqueue
// span, in the trace of the request that made the job.
func ExampleEnqueueMiddleware() {
	dir, _ := os.MkdirTemp("", "lqotel-example")
	defer os.RemoveAll(dir)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	opts := lqotel.Options{TracerProvider: tp, ChildRuns: true}

	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.UseEnqueue(lqotel.EnqueueMiddleware(opts))
	run, err := lqotel.Middleware(opts)
	if err != nil {
		log.Fatal(err)
	}
	q.Use(run)
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error { return nil })

	ctx, request := tp.Tracer("app").Start(context.Background(), "POST /signup")
	if _, err := q.Enqueue(ctx, "email.send", "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	request.End()
	if _, err := q.RunDue(context.Background()); err != nil {
		log.Fatal(err)
	}

	names := map[string]string{} // span ID → name
	for _, s := range spans.GetSpans() {
		names[s.SpanContext.SpanID().String()] = s.Name
	}
	for _, s := range spans.GetSpans() {
		parent := "none"
		if s.Parent.IsValid() {
			parent = names[s.Parent.SpanID().String()]
		}
		fmt.Printf("%-18s %-9s parent: %s\n", s.Name, s.SpanKind, parent)
	}
	// Output:
	// enqueue email.send producer  parent: POST /signup
	// POST /signup       internal  parent: none
	// run email.send     consumer  parent: enqueue email.send
}
