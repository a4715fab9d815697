package lqotel_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benbjohnson/clock"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/lqotel"
)

// setup opens a queue with the middleware of lqotel on in-memory
// exporters: its spans and its metric reader.
func setup(t *testing.T) (*litequeue.Queue, *sdktrace.TracerProvider, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	mw, err := lqotel.Middleware(lqotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	q.Use(mw)
	return q, tp, spans, reader
}

// TestMiddleware_LinksTheEnqueuer enqueues a job inside a span with
// Inject: the run's span is a new root, linked to that span, and the
// handler's ctx holds the run's span.
func TestMiddleware_LinksTheEnqueuer(t *testing.T) {
	t.Parallel()
	q, tp, spans, _ := setup(t)
	var inHandler trace.SpanContext
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
		inHandler = trace.SpanContextFromContext(ctx)
		return nil
	})
	ctx, request := tp.Tracer("app").Start(t.Context(), "POST /signup")
	job, err := q.Enqueue(ctx, "email.send", "ada@example.com", lqotel.Inject(ctx))
	if err != nil {
		t.Fatal(err)
	}
	request.End()
	if _, ok := job.Metadata["traceparent"]; !ok {
		t.Fatalf("metadata %v holds no traceparent", job.Metadata)
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := spans.GetSpans()
	if len(got) != 2 {
		t.Fatalf("%d spans, want the request's and the run's", len(got))
	}
	run := got[1]
	if run.Name != "run email.send" || run.SpanKind != trace.SpanKindConsumer {
		t.Errorf("run span %q of kind %v, want \"run email.send\", consumer", run.Name, run.SpanKind)
	}
	if run.Parent.IsValid() || run.SpanContext.TraceID() == request.SpanContext().TraceID() {
		t.Errorf("run span has parent %v in trace %v: want a new root", run.Parent, run.SpanContext.TraceID())
	}
	if len(run.Links) != 1 || run.Links[0].SpanContext.TraceID() != request.SpanContext().TraceID() ||
		run.Links[0].SpanContext.SpanID() != request.SpanContext().SpanID() {
		t.Errorf("run span links %+v, want one to the request's span %v", run.Links, request.SpanContext())
	}
	if !inHandler.Equal(run.SpanContext) {
		t.Errorf("the handler's ctx holds span %v, want the run's %v", inHandler, run.SpanContext)
	}
	want := map[attribute.Key]attribute.Value{
		"litequeue.job.id":      attribute.Int64Value(job.ID),
		"litequeue.job.queue":   attribute.StringValue("default"),
		"litequeue.job.kind":    attribute.StringValue("email.send"),
		"litequeue.job.attempt": attribute.IntValue(1),
		"litequeue.outcome":     attribute.StringValue("completed"),
	}
	for _, kv := range run.Attributes {
		if w, ok := want[kv.Key]; ok && w != kv.Value {
			t.Errorf("attribute %s = %v, want %v", kv.Key, kv.Value.String(), w.String())
		}
		delete(want, kv.Key)
	}
	if len(want) > 0 {
		t.Errorf("run span lacks attributes %v", want)
	}
}

// TestMiddleware_NoEnqueuer runs a job enqueued without Inject: its span
// has no link.
func TestMiddleware_NoEnqueuer(t *testing.T) {
	t.Parallel()
	q, _, spans, _ := setup(t)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	if _, err := q.Enqueue(t.Context(), "k", nil, lqotel.Inject(t.Context())); err != nil {
		t.Fatal(err)
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := spans.GetSpans(); len(got) != 1 || len(got[0].Links) != 0 {
		t.Errorf("spans %+v, want one without links", got)
	}
}

// TestMiddleware_Failures records a failed run's error and a panic on
// their spans, and counts and times every run by kind and outcome.
func TestMiddleware_Failures(t *testing.T) {
	t.Parallel()
	q, _, spans, reader := setup(t)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		var what string
		job.Decode(&what)
		switch what {
		case "panic":
			panic("boom")
		case "fail":
			return errors.New("smtp: 451")
		}
		return nil
	})
	for _, p := range []string{"ok", "ok", "fail", "panic"} {
		if _, err := q.Enqueue(t.Context(), "k", p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, s := range spans.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == "litequeue.outcome" && s.Status.Code == codes.Error {
				status[kv.Value.AsString()] = s.Status.Description
			}
		}
	}
	if status["failed"] != "smtp: 451" || status["panicked"] != "panic: boom" {
		t.Errorf("error statuses by outcome %v, want failed: smtp: 451, panicked: panic: boom", status)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	counts, timed := map[string]int64{}, map[string]uint64{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch data := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, dp := range data.DataPoints {
				counts[outcomeOf(t, dp.Attributes)] = dp.Value
			}
		case metricdata.Histogram[float64]:
			for _, dp := range data.DataPoints {
				timed[outcomeOf(t, dp.Attributes)] = dp.Count
			}
		}
	}
	wantCounts := map[string]int64{"completed": 2, "failed": 1, "panicked": 1}
	for outcome, n := range wantCounts {
		if counts[outcome] != n || timed[outcome] != uint64(n) {
			t.Errorf("%s: counted %d, timed %d; want %d", outcome, counts[outcome], timed[outcome], n)
		}
	}
}

// outcomeOf returns the outcome of a data point of kind k.
func outcomeOf(t *testing.T, set attribute.Set) string {
	t.Helper()
	if kind, _ := set.Value("litequeue.job.kind"); kind.AsString() != "k" {
		t.Errorf("data point of kind %q, want k", kind.AsString())
	}
	outcome, _ := set.Value("litequeue.outcome")
	return outcome.AsString()
}

// TestCoreLinksNoOTel lists what a program of the core alone links
// (examples/schedule): none of OpenTelemetry, which only this package
// brings in.
func TestCoreLinksNoOTel(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/litequeue/litequeue/examples/schedule").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "go.opentelemetry.io/") || strings.HasPrefix(pkg, "github.com/litequeue/litequeue/lqotel") {
			t.Errorf("examples/schedule links %s", pkg)
		}
	}
}
