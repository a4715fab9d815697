package prom

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litequeue/litequeue"
)

// RunDurations is a [prometheus.Collector] of the histogram of run
// durations, by kind and outcome ([litequeue.ResultOutcome]; "panicked"
// for a panic, "released" for a run that a shutdown cut short):
//
//	litequeue_run_duration_seconds{kind, outcome}
//
// Unlike [Collector], which reads the file, it counts the runs of this
// process as its [RunDurations.Middleware] sees them. Register it beside
// the Collector and give its Middleware to [litequeue.Queue.Use]:
//
//	durations := prom.NewRunDurations(nil)
//	prometheus.MustRegister(prom.NewCollector(q), durations)
//	q.Use(durations.Middleware)
//
// It is safe for concurrent use. Durations are on the wall clock.
type RunDurations struct {
	vec *prometheus.HistogramVec
}

// NewRunDurations returns a histogram of run durations with the given
// bucket bounds, in seconds; nil means prometheus.DefBuckets (5ms … 10s).
func NewRunDurations(buckets []float64) *RunDurations {
	if buckets == nil {
		buckets = prometheus.DefBuckets
	}
	return &RunDurations{vec: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "litequeue_run_duration_seconds",
		Help:    "How long runs of litequeue jobs took, by kind and outcome.",
		Buckets: buckets,
	}, []string{"kind", "outcome"})}
}

// Middleware times each run of the handler it wraps.
func (d *RunDurations) Middleware(next litequeue.Handler) litequeue.Handler {
	return func(ctx context.Context, job *litequeue.Job) (err error) {
		start := time.Now()
		defer func() {
			outcome := string(litequeue.ResultOutcome(ctx, err))
			p := recover()
			switch {
			case p != nil:
				outcome = "panicked"
			case outcome == "":
				outcome = "released"
			}
			d.vec.WithLabelValues(job.Kind, outcome).Observe(time.Since(start).Seconds())
			if p != nil {
				panic(p)
			}
		}()
		return next(ctx, job)
	}
}

// Describe sends the histogram's description.
func (d *RunDurations) Describe(ch chan<- *prometheus.Desc) { d.vec.Describe(ch) }

// Collect sends the histogram.
func (d *RunDurations) Collect(ch chan<- prometheus.Metric) { d.vec.Collect(ch) }
