// Package lqotel traces and measures litequeue runs with OpenTelemetry,
// through the API of [go.opentelemetry.io/otel] only: the app chooses and
// sets up the SDK. It is a package of its own so that a program that uses
// only litequeue links none of OpenTelemetry.
//
// [Inject] carries the enqueuer's span context into the job's metadata,
// and [Middleware] gives every run a span linked to it:
//
//	mw, err := lqotel.Middleware(lqotel.Options{})
//	q.Use(mw)
//	q.Enqueue(ctx, "email.send", to, lqotel.Inject(ctx))
//
// A run's span is a new root, of kind consumer, with a link to the
// enqueuer's span rather than a child of it: a job runs long after the
// request that enqueued it ended (seconds, or days for a retry), and once
// per try, so that the enqueuer's trace would stay open for as long as
// the job lives and gather every retry. The link leads from each run to
// the enqueue, and each run is a trace of its own.
//
// The metrics, by kind and outcome ([litequeue.ResultOutcome]; "panicked"
// for a panic, "released" for a run that a shutdown cut short):
//
//	litequeue.runs          counter of runs
//	litequeue.run.duration  histogram of the runs' durations, in seconds
package lqotel

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/litequeue/litequeue"
)

// scope is the instrumentation scope of the tracer and the meter.
const scope = "github.com/litequeue/litequeue/lqotel"

// Options configures [Middleware] and [Inject]. The zero Options is valid:
// it uses the global providers, read when Middleware is called, and the
// W3C trace context.
type Options struct {
	TracerProvider trace.TracerProvider          // nil: otel.GetTracerProvider()
	MeterProvider  metric.MeterProvider          // nil: otel.GetMeterProvider()
	Propagator     propagation.TextMapPropagator // nil: propagation.TraceContext{}, the W3C traceparent and tracestate
}

// propagator returns the configured propagator, or the W3C trace context.
func (o Options) propagator() propagation.TextMapPropagator {
	if o.Propagator == nil {
		return propagation.TraceContext{}
	}
	return o.Propagator
}

// Inject returns an enqueue option that carries ctx's span context into
// the job's metadata, under the W3C keys "traceparent" and "tracestate",
// so that [Middleware] links each run to the enqueuer's span. With no
// span in ctx it adds nothing. InjectWith takes another propagator.
func Inject(ctx context.Context) litequeue.EnqueueOption {
	return InjectWith(ctx, Options{})
}

// InjectWith is [Inject] with the propagator of opts.
func InjectWith(ctx context.Context, opts Options) litequeue.EnqueueOption {
	carrier := propagation.MapCarrier{}
	opts.propagator().Inject(ctx, carrier)
	return litequeue.MetadataMap(carrier)
}

// Middleware returns a middleware for [litequeue.Queue.Use] that starts a
// span per run, linked to the span whose context [Inject] put in the
// job's metadata, and counts and times the runs. The span is named
// "run <kind>", carries the job's ID, queue, kind and attempt, and ends
// with an error status when the handler fails or panics. The handler's
// ctx holds the span. It returns an error if an instrument cannot be
// made.
func Middleware(opts Options) (func(litequeue.Handler) litequeue.Handler, error) {
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(scope)
	runs, err := meter.Int64Counter("litequeue.runs", metric.WithDescription("Runs of litequeue jobs, by kind and outcome."))
	if err != nil {
		return nil, fmt.Errorf("lqotel: %w", err)
	}
	duration, err := meter.Float64Histogram("litequeue.run.duration", metric.WithUnit("s"),
		metric.WithDescription("How long litequeue runs took, by kind and outcome."))
	if err != nil {
		return nil, fmt.Errorf("lqotel: %w", err)
	}
	r := &recorder{tracer: tp.Tracer(scope), prop: opts.propagator(), runs: runs, duration: duration}
	return r.wrap, nil
}

// recorder holds what the middleware of one Middleware call records with.
type recorder struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	runs     metric.Int64Counter
	duration metric.Float64Histogram
}

// wrap is the middleware.
func (r *recorder) wrap(next litequeue.Handler) litequeue.Handler {
	return func(ctx context.Context, job *litequeue.Job) (err error) {
		ctx, span := r.start(ctx, job)
		start := time.Now()
		defer func() {
			outcome := string(litequeue.ResultOutcome(ctx, err))
			p := recover()
			switch {
			case p != nil:
				outcome = "panicked"
				span.SetStatus(codes.Error, fmt.Sprint("panic: ", p))
			case outcome == "":
				outcome = "released"
			case err != nil:
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			span.SetAttributes(attribute.String("litequeue.outcome", outcome))
			span.End()
			set := metric.WithAttributes(attribute.String("litequeue.job.kind", job.Kind), attribute.String("litequeue.outcome", outcome))
			r.runs.Add(context.WithoutCancel(ctx), 1, set)
			r.duration.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), set)
			if p != nil {
				panic(p)
			}
		}()
		return next(ctx, job)
	}
}

// start starts the run's span: a new root linked to the enqueuer's span,
// if the metadata holds its context.
func (r *recorder) start(ctx context.Context, job *litequeue.Job) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.Int64("litequeue.job.id", job.ID),
			attribute.String("litequeue.job.queue", job.Queue),
			attribute.String("litequeue.job.kind", job.Kind),
			attribute.Int("litequeue.job.attempt", job.Attempt),
		),
	}
	enqueued := r.prop.Extract(context.Background(), propagation.MapCarrier(job.Metadata))
	if sc := trace.SpanContextFromContext(enqueued); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return r.tracer.Start(ctx, "run "+job.Kind, opts...)
}
