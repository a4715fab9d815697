package prom

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litequeue/litequeue"
)

// counted are the events that Counters counts, each in a counter of its
// own, by queue and kind.
var counted = []struct{ event, name, help string }{
	{"job.enqueued", "litequeue_jobs_enqueued_total", "Jobs enqueued by this process."},
	{"job.started", "litequeue_jobs_started_total", "Runs started by this process."},
	{"job.completed", "litequeue_jobs_completed_total", "Runs completed in this process."},
	{"job.retry", "litequeue_jobs_retried_total", "Failed runs in this process whose job waits to run again."},
	{"job.snoozed", "litequeue_jobs_snoozed_total", "Runs in this process that snoozed their job."},
	{"job.dead", "litequeue_jobs_dead_total", "Jobs that went dead in this process."},
	{"job.discarded", "litequeue_jobs_discarded_total", "Jobs discarded in this process."},
	{"job.cancelled", "litequeue_jobs_cancelled_total", "Jobs cancelled in this process."},
	{"job.expired", "litequeue_jobs_expired_total", "Jobs this process found expired: not started by their expiry."},
	{"job.replayed", "litequeue_jobs_replayed_total", "Dead jobs replayed by this process."},
}

// Counters is a [prometheus.Collector] of counters of the events of one
// process's Queue, by queue and kind:
//
//	litequeue_jobs_enqueued_total{queue, kind}   job.enqueued
//	litequeue_jobs_started_total{queue, kind}    job.started: runs
//	litequeue_jobs_completed_total{queue, kind}  job.completed
//	litequeue_jobs_retried_total{queue, kind}    job.retry: failed runs to be run again
//	litequeue_jobs_snoozed_total{queue, kind}    job.snoozed
//	litequeue_jobs_dead_total{queue, kind}       job.dead
//	litequeue_jobs_discarded_total{queue, kind}  job.discarded
//	litequeue_jobs_cancelled_total{queue, kind}  job.cancelled
//	litequeue_jobs_expired_total{queue, kind}    job.expired
//	litequeue_jobs_replayed_total{queue, kind}   job.replayed
//
// Unlike [Collector], which reads the database, it counts what
// [litequeue.Options.OnEvent] reports: the changes this process made,
// from its start. Each process of a fleet exports its own, and
// Prometheus's rate() and sum() add them up. A series appears at its
// first event. Its labels are names the Queue validates, so their number
// is bounded by the app's queues and kinds; an event whose queue or kind
// is not valid UTF-8 (written by an older version, or the app's SQL) is
// not counted, and logged once, as the Collector does.
//
// The Queue calls one OnEvent: give it [Counters.OnEvent], call that from
// the app's own, or chain the two with [Counters.Wrap]:
//
//	counters := prom.NewCounters()
//	opts.OnEvent = counters.Wrap(opts.OnEvent)
//	q, err := litequeue.Open(path, opts)
//	prometheus.MustRegister(prom.NewCollector(q), counters)
//
// It is safe for concurrent use.
type Counters struct {
	// Logger receives a warning for each event not counted because its
	// queue or kind cannot be a label value, once per value. Set it
	// before the Queue is opened. nil: [slog.Default].
	Logger *slog.Logger

	vecs  map[string]*prometheus.CounterVec // by event type; only read after NewCounters
	drops dropLog
}

// NewCounters returns counters at zero.
func NewCounters() *Counters {
	c := &Counters{vecs: make(map[string]*prometheus.CounterVec, len(counted))}
	for _, e := range counted {
		c.vecs[e.event] = prometheus.NewCounterVec(prometheus.CounterOpts{Name: e.name, Help: e.help}, []string{"queue", "kind"})
	}
	return c
}

// OnEvent counts ev, if it is of a type counted (see [Counters]).
func (c *Counters) OnEvent(ev litequeue.Event) {
	vec := c.vecs[ev.Type]
	if vec == nil {
		return
	}
	n, err := vec.GetMetricWithLabelValues(ev.Job.Queue, ev.Job.Kind)
	if err != nil {
		c.drops.drop(c.Logger, err)
		return
	}
	n.Inc()
}

// Wrap returns an OnEvent that counts each event and then, if next is not
// nil, calls next with it.
func (c *Counters) Wrap(next func(litequeue.Event)) func(litequeue.Event) {
	return func(ev litequeue.Event) {
		c.OnEvent(ev)
		if next != nil {
			next(ev)
		}
	}
}

// Describe sends the descriptions of the counters.
func (c *Counters) Describe(ch chan<- *prometheus.Desc) {
	for _, e := range counted {
		c.vecs[e.event].Describe(ch)
	}
}

// Collect sends the counters.
func (c *Counters) Collect(ch chan<- prometheus.Metric) {
	for _, e := range counted {
		c.vecs[e.event].Collect(ch)
	}
}
