package lqotel_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/benbjohnson/clock"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/lqotel"
	"github.com/litequeue/litequeue/postgres"
)

// backends runs test on a Queue in a file and on one on the PostgreSQL
// server (skipped without one: see pgtest).
func backends(t *testing.T, test func(t *testing.T, open func(litequeue.Options) *litequeue.Queue)) {
	t.Helper()
	for _, backend := range []string{"file", "server"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			test(t, func(opts litequeue.Options) *litequeue.Queue {
				t.Helper()
				opts.Clock = clock.NewMock()
				var q *litequeue.Queue
				var err error
				if backend == "file" {
					q, err = litequeue.Open(filepath.Join(t.TempDir(), "q.db"), opts)
				} else {
					q, err = postgres.Open(t.Context(), pgtest.DSN(t), opts)
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { q.Close() })
				return q
			})
		})
	}
}

// traced opens a Queue whose jobs are made through EnqueueMiddleware and
// run through Middleware with opts, on an in-memory exporter.
func traced(t *testing.T, open func(litequeue.Options) *litequeue.Queue, opts lqotel.Options) (*litequeue.Queue, *sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	opts.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	q := open(litequeue.Options{EnqueueMiddleware: []func(litequeue.Enqueuer) litequeue.Enqueuer{lqotel.EnqueueMiddleware(opts)}})
	mw, err := lqotel.Middleware(opts)
	if err != nil {
		t.Fatal(err)
	}
	q.Use(mw)
	return q, opts.TracerProvider.(*sdktrace.TracerProvider), spans
}

// byName returns the ended spans by name, failing the test on a name
// ended twice.
func byName(t *testing.T, spans *tracetest.InMemoryExporter) map[string]tracetest.SpanStub {
	t.Helper()
	out := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		if _, dup := out[s.Name]; dup {
			t.Fatalf("two spans named %q", s.Name)
		}
		out[s.Name] = s
	}
	return out
}

// hasAttributes reports, as test errors, the attributes of want that span
// lacks or holds with another value.
func hasAttributes(t *testing.T, span tracetest.SpanStub, want map[attribute.Key]string) {
	t.Helper()
	got := map[attribute.Key]string{}
	for _, kv := range span.Attributes {
		got[kv.Key] = kv.Value.String()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %q, want %q", span.Name, k, got[k], v)
		}
	}
}

// TestEnqueueMiddleware_ChildRun enqueues a job inside a request's span,
// without Inject: the enqueue middleware starts a producer span, a child
// of the request's, whose context the job carries, and with ChildRuns the
// run's span is a child of that producer span, in the request's trace.
func TestEnqueueMiddleware_ChildRun(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(litequeue.Options) *litequeue.Queue) {
		q, tp, spans := traced(t, open, lqotel.Options{ChildRuns: true})
		var inHandler trace.SpanContext
		q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
			inHandler = trace.SpanContextFromContext(ctx)
			return nil
		})
		ctx, request := tp.Tracer("app").Start(t.Context(), "POST /signup")
		job, err := q.Enqueue(ctx, "email.send", "ada@example.com", litequeue.OnQueue("mail"))
		if err != nil {
			t.Fatal(err)
		}
		request.End()
		if _, err := q.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := byName(t, spans)
		enq, run := got["enqueue email.send"], got["run email.send"]
		if enq.SpanKind != trace.SpanKindProducer || enq.Parent.SpanID() != request.SpanContext().SpanID() ||
			enq.SpanContext.TraceID() != request.SpanContext().TraceID() {
			t.Errorf("enqueue span of kind %v, parent %v; want a producer, child of the request's span %v",
				enq.SpanKind, enq.Parent.SpanID(), request.SpanContext().SpanID())
		}
		if tp := job.Metadata["traceparent"]; tp != "00-"+enq.SpanContext.TraceID().String()+"-"+enq.SpanContext.SpanID().String()+"-01" {
			t.Errorf("job's traceparent %q, want the enqueue span's %v", tp, enq.SpanContext)
		}
		if run.SpanKind != trace.SpanKindConsumer || run.Parent.SpanID() != enq.SpanContext.SpanID() ||
			run.SpanContext.TraceID() != request.SpanContext().TraceID() || len(run.Links) != 0 {
			t.Errorf("run span of kind %v, parent %v, links %v; want a consumer, child of the enqueue span %v, no links",
				run.SpanKind, run.Parent.SpanID(), run.Links, enq.SpanContext.SpanID())
		}
		if !inHandler.Equal(run.SpanContext) {
			t.Errorf("the handler's ctx holds span %v, want the run's %v", inHandler, run.SpanContext)
		}
		hasAttributes(t, enq, map[attribute.Key]string{"messaging.system": "litequeue", "messaging.operation.type": "create",
			"messaging.operation.name": "enqueue", "messaging.destination.name": "mail", "litequeue.job.kind": "email.send"})
		hasAttributes(t, run, map[attribute.Key]string{"messaging.system": "litequeue", "messaging.operation.type": "process",
			"messaging.operation.name": "run", "messaging.destination.name": "mail", "messaging.message.id": strconv.FormatInt(job.ID, 10)})
	})
}

// TestEnqueueMiddleware_LinkedRuns enqueues a batch: each job gets a
// producer span of its own, and by default each run is a new root linked
// to its job's producer span.
func TestEnqueueMiddleware_LinkedRuns(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(litequeue.Options) *litequeue.Queue) {
		q, _, spans := traced(t, open, lqotel.Options{})
		q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
		jobs, err := q.EnqueueMany(t.Context(), "k", []any{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		producers := map[trace.SpanID]bool{}
		var runs []tracetest.SpanStub
		for _, s := range spans.GetSpans() {
			switch s.SpanKind {
			case trace.SpanKindProducer:
				producers[s.SpanContext.SpanID()] = true
			case trace.SpanKindConsumer:
				runs = append(runs, s)
			}
		}
		if len(producers) != 2 || len(runs) != 2 {
			t.Fatalf("%d producer spans, %d runs; want 2 and 2", len(producers), len(runs))
		}
		for i, run := range runs {
			if run.Parent.IsValid() || len(run.Links) != 1 || !producers[run.Links[0].SpanContext.SpanID()] {
				t.Errorf("run %d: parent %v, links %+v; want a new root linked to a producer span", i, run.Parent, run.Links)
			}
			delete(producers, run.Links[0].SpanContext.SpanID())
		}
		if jobs[0].Metadata["traceparent"] == jobs[1].Metadata["traceparent"] {
			t.Errorf("both jobs carry traceparent %q, want one each", jobs[0].Metadata["traceparent"])
		}
	})
}

// TestEnqueueMiddleware_Refused: a job that a later middleware refuses
// ends its producer span with an error status, and is not stored.
func TestEnqueueMiddleware_Refused(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(litequeue.Options) *litequeue.Queue) {
		q, _, spans := traced(t, open, lqotel.Options{})
		q.UseEnqueue(func(litequeue.Enqueuer) litequeue.Enqueuer {
			return func(context.Context, *litequeue.NewJob) error { return errors.New("over quota") }
		})
		if _, err := q.Enqueue(t.Context(), "k", nil); err == nil {
			t.Fatal("Enqueue refused by a middleware returned nil")
		}
		enq := byName(t, spans)["enqueue k"]
		if enq.Status.Code != codes.Error || enq.Status.Description != "over quota" {
			t.Errorf("enqueue span's status %+v, want the error over quota", enq.Status)
		}
		if jobs, err := q.List(t.Context(), litequeue.Filter{}); err != nil || len(jobs) != 0 {
			t.Errorf("List: %d jobs, %v; want none", len(jobs), err)
		}
	})
}
