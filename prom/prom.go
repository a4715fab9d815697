// Package prom exports a litequeue Queue's figures to Prometheus, through
// [github.com/prometheus/client_golang]. It is a package of its own so
// that a program that uses only litequeue links none of client_golang.
//
//	prometheus.MustRegister(prom.NewCollector(q))
//
// The collector reads the file at each scrape
// ([litequeue.Queue.Stats] and [litequeue.Queue.FailuresLastHour]); it
// keeps no counters of its own, so every process that scrapes the same
// file reports the same figures. The metrics:
//
//	litequeue_jobs{queue, state}                   jobs by state; "pending" split into "due" and "scheduled"
//	litequeue_oldest_due_seconds{queue}            how long the oldest due job has waited: the queue's latency
//	litequeue_retries_last_hour{kind, error_class} failed runs retried in the last hour
//	litequeue_deaths_last_hour{kind, error_class}  jobs that went dead in the last hour
//	litequeue_unhandled_kinds{kind}                1 for each kind with due jobs and no handler on this Queue
//
// A series whose label value is not valid UTF-8 — a kind or queue name
// that an older version of litequeue, or the app's own SQL, wrote to the
// file — cannot be exported: the collector leaves it out of the scrape,
// and logs each such value once ([Collector.Logger]), so that the rest of
// the scrape, and the app's own metrics in the same registry, still
// arrive.
//
// The histogram of run durations by kind and outcome,
// litequeue_run_duration_seconds, cannot be read from the file: it is
// [RunDurations], fed by a middleware.
package prom

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litequeue/litequeue"
)

// scrapeTimeout bounds the reads of one scrape.
const scrapeTimeout = 10 * time.Second

var (
	jobsDesc = prometheus.NewDesc("litequeue_jobs",
		"Jobs by queue and state; pending jobs are due or scheduled.", []string{"queue", "state"}, nil)
	oldestDesc = prometheus.NewDesc("litequeue_oldest_due_seconds",
		"How long the oldest due job of the queue has been due.", []string{"queue"}, nil)
	retriesDesc = prometheus.NewDesc("litequeue_retries_last_hour",
		"Failed runs retried in the last hour.", []string{"kind", "error_class"}, nil)
	deathsDesc = prometheus.NewDesc("litequeue_deaths_last_hour",
		"Jobs that went dead in the last hour.", []string{"kind", "error_class"}, nil)
	unhandledDesc = prometheus.NewDesc("litequeue_unhandled_kinds",
		"Kinds with due jobs and no handler on this Queue.", []string{"kind"}, nil)
)

// Collector is a [prometheus.Collector] of one Queue's figures. It is
// safe for concurrent use; after the Queue is closed a scrape reports the
// error.
type Collector struct {
	// Logger receives a warning for each series left out of a scrape
	// because a label value cannot be exported (see the package doc),
	// once per value. Set it before the Collector is registered. nil:
	// [slog.Default].
	Logger *slog.Logger

	q       *litequeue.Queue
	mu      sync.Mutex
	dropped map[string]bool // the problems logged; under mu
}

// NewCollector returns the collector of q's figures.
func NewCollector(q *litequeue.Queue) *Collector { return &Collector{q: q} }

// Describe sends the descriptions of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jobsDesc, oldestDesc, retriesDesc, deathsDesc, unhandledDesc} {
		ch <- d
	}
}

// Collect reads the Queue's figures and sends them.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	stats, err := c.q.Stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...)
		if err != nil {
			c.drop(err)
			return
		}
		ch <- m
	}
	for name, qs := range stats.Queues {
		for state, n := range map[string]int{
			"due": qs.Due, "scheduled": qs.Scheduled, "running": qs.Running, "dead": qs.Dead,
			"completed": qs.Completed, "discarded": qs.Discarded, "cancelled": qs.Cancelled, "expired": qs.Expired,
		} {
			gauge(jobsDesc, float64(n), name, state)
		}
		gauge(oldestDesc, qs.OldestDue.Seconds(), name)
	}
	for _, kind := range stats.Unhandled {
		gauge(unhandledDesc, 1, kind)
	}
	failures, err := c.q.FailuresLastHour(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(retriesDesc, err)
		return
	}
	type key struct{ kind, class string }
	retries, deaths := map[key]int{}, map[key]int{}
	for _, f := range failures {
		k := key{f.Kind, f.ErrorClass}
		if f.Retries > 0 {
			retries[k] += f.Retries
		}
		if f.Deaths > 0 {
			deaths[k] += f.Deaths
		}
	}
	for k, n := range retries {
		gauge(retriesDesc, float64(n), k.kind, k.class)
	}
	for k, n := range deaths {
		gauge(deathsDesc, float64(n), k.kind, k.class)
	}
}

// drop logs, the first time, the problem err that leaves a series out of
// the scrape.
func (c *Collector) drop(err error) {
	c.mu.Lock()
	seen := c.dropped[err.Error()]
	if !seen {
		if c.dropped == nil {
			c.dropped = make(map[string]bool)
		}
		c.dropped[err.Error()] = true
	}
	c.mu.Unlock()
	if seen {
		return
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn("litequeue prom: a series is left out of the scrape, and others with the same problem will be, unlogged", "err", err)
}
