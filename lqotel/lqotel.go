// Package lqotel traces and measures litequeue jobs with OpenTelemetry,
// through the API of [go.opentelemetry.io/otel] only: the app chooses and
// sets up the SDK. It is a package of its own so that a program that uses
// only litequeue links none of OpenTelemetry.
//
// [EnqueueMiddleware] gives the making of every job a span of kind
// producer and carries its context into the job's metadata, and
// [Middleware] gives every run a span of kind consumer linked to it:
//
//	q.UseEnqueue(lqotel.EnqueueMiddleware(lqotel.Options{}))
//	mw, err := lqotel.Middleware(lqotel.Options{})
//	q.Use(mw)
//	q.Enqueue(ctx, "email.send", to) // the span "enqueue email.send", a child of ctx's
//
// Without the enqueue middleware, [Inject] carries ctx's span context on
// one call: q.Enqueue(ctx, "email.send", to, lqotel.Inject(ctx)).
//
// A run's span is by default a new root, with a link to the enqueuer's
// span rather than a child of it: a job runs long after the request that
// enqueued it ended (seconds, or days for a retry), and once per try, so
// that the enqueuer's trace would stay open for as long as the job lives
// and gather every retry. The link leads from each run to the enqueue,
// and each run is a trace of its own. [Options.ChildRuns] makes each run a
// child of the enqueuer's span instead, for a trace that shows a request
// and the jobs it made in one tree.
//
// The spans carry the attributes of OpenTelemetry's messaging semantic
// conventions (v1.43.0): messaging.system "litequeue",
// messaging.operation.type "create" (one span per job, made before the
// insert; the convention's former "publish" is gone from it) or
// "process", messaging.operation.name "enqueue" or "run",
// messaging.destination.name the queue, and on a run's span
// messaging.message.id the job's ID. An enqueue's span has no
// messaging.message.id: it ends when the job has passed through the
// middleware, before the insert gives the job its ID.
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
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/litequeue/litequeue"
)

// scope is the instrumentation scope of the tracer and the meter.
const scope = "github.com/litequeue/litequeue/lqotel"

// Options configures [Middleware], [EnqueueMiddleware] and [Inject]. The
// zero Options is valid: it uses the global providers, read when
// Middleware or EnqueueMiddleware is called, the W3C trace context, and
// runs linked to their enqueuer.
type Options struct {
	TracerProvider trace.TracerProvider          // nil: otel.GetTracerProvider()
	MeterProvider  metric.MeterProvider          // nil: otel.GetMeterProvider()
	Propagator     propagation.TextMapPropagator // nil: propagation.TraceContext{}, the W3C traceparent and tracestate

	// ChildRuns makes each run's span a child of the enqueuer's span, in its
	// trace, rather than a new root linked to it. A run of a job whose
	// metadata holds no span context is a new root either way. false: linked.
	ChildRuns bool
}

// tracerProvider returns the configured tracer provider, or the global one.
func (o Options) tracerProvider() trace.TracerProvider {
	if o.TracerProvider == nil {
		return otel.GetTracerProvider()
	}
	return o.TracerProvider
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
// span in ctx it adds nothing. InjectWith takes another propagator. A
// Queue with [EnqueueMiddleware] needs neither: it puts its own span's
// context in every job's metadata, in place of what Inject put there.
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
// span per run, of kind consumer, linked to the span whose context
// [EnqueueMiddleware] or [Inject] put in the job's metadata (or its child,
// with [Options.ChildRuns]), and counts and times the runs. The span is
// named "run <kind>", carries the job's ID, queue, kind and attempt and
// the messaging attributes (see the package doc), and ends with an error
// status when the handler fails or panics. The handler's ctx holds the
// span. It returns an error if an instrument cannot be made.
func Middleware(opts Options) (func(litequeue.Handler) litequeue.Handler, error) {
	mp := opts.MeterProvider
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
	r := &recorder{tracer: opts.tracerProvider().Tracer(scope), prop: opts.propagator(), child: opts.ChildRuns,
		runs: runs, duration: duration}
	return r.wrap, nil
}

// recorder holds what the middleware of one Middleware call records with.
type recorder struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	child    bool // runs are children of the enqueuer's span
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
// if the metadata holds its context, or with child a child of that span.
func (r *recorder) start(ctx context.Context, job *litequeue.Job) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(messaging(job.Queue, semconv.MessagingOperationTypeProcess, "run")...),
		trace.WithAttributes(
			semconv.MessagingMessageID(strconv.FormatInt(job.ID, 10)),
			attribute.Int64("litequeue.job.id", job.ID),
			attribute.String("litequeue.job.queue", job.Queue),
			attribute.String("litequeue.job.kind", job.Kind),
			attribute.Int("litequeue.job.attempt", job.Attempt),
		),
	}
	enqueued := r.prop.Extract(context.Background(), propagation.MapCarrier(job.Metadata))
	switch sc := trace.SpanContextFromContext(enqueued); {
	case !sc.IsValid():
		opts = append(opts, trace.WithNewRoot())
	case r.child:
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	default:
		opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return r.tracer.Start(ctx, "run "+job.Kind, opts...)
}

// messaging returns the messaging attributes of a span of an operation on
// a job of queue.
func messaging(queue string, operation attribute.KeyValue, name string) []attribute.KeyValue {
	return []attribute.KeyValue{
		semconv.MessagingSystemKey.String("litequeue"),
		operation,
		semconv.MessagingOperationName(name),
		semconv.MessagingDestinationName(queue),
	}
}

// EnqueueMiddleware returns an enqueue middleware for
// [litequeue.Queue.UseEnqueue] (or [litequeue.Options.EnqueueMiddleware])
// that starts a span per job made, a child of the span in the enqueuer's
// ctx, of kind producer, named "enqueue <kind>", with the job's kind and
// queue and the messaging attributes (see the package doc), and puts its
// context into the job's metadata, as [Inject] puts ctx's, for
// [Middleware]. The span ends when the job has passed through the
// middleware inside this one, with an error status if one refused it; a
// failure of the insert that follows is not on it. Each job of a
// [litequeue.Queue.EnqueueMany] gets a span of its own.
func EnqueueMiddleware(opts Options) func(litequeue.Enqueuer) litequeue.Enqueuer {
	tracer, prop := opts.tracerProvider().Tracer(scope), opts.propagator()
	return func(next litequeue.Enqueuer) litequeue.Enqueuer {
		return func(ctx context.Context, job *litequeue.NewJob) error {
			ctx, span := tracer.Start(ctx, "enqueue "+job.Kind(),
				trace.WithSpanKind(trace.SpanKindProducer),
				trace.WithAttributes(messaging(job.Queue(), semconv.MessagingOperationTypeCreate, "enqueue")...),
				trace.WithAttributes(
					attribute.String("litequeue.job.queue", job.Queue()),
					attribute.String("litequeue.job.kind", job.Kind()),
				))
			defer span.End()
			prop.Inject(ctx, propagation.MapCarrier(job.Metadata))
			err := next(ctx, job)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			return err
		}
	}
}
