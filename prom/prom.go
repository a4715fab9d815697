// Package prom exports a litequeue Queue's figures to Prometheus, through
// [github.com/prometheus/client_golang]. It is a package of its own so
// that a program that uses only litequeue links none of client_golang.
//
//	prometheus.MustRegister(prom.NewCollector(q))
//
// The collector reads the database at each scrape
// ([litequeue.Queue.Stats], [litequeue.Queue.FailuresLastHour],
// [litequeue.Queue.Limits], [litequeue.Queue.Periodics]); it keeps no
// counters of its own, so every process that scrapes the same database
// reports the same figures, but for the limits and the unhandled kinds,
// which are those of the Queue's own handlers. The metrics:
//
//	litequeue_jobs{queue, state}                   jobs by state; "pending" split into "due" and "scheduled"
//	litequeue_oldest_due_seconds{queue}            how long the oldest due job has waited: the queue's latency
//	litequeue_retries_last_hour{kind, error_class} failed runs retried in the last hour
//	litequeue_deaths_last_hour{kind, error_class}  jobs that went dead in the last hour
//	litequeue_unhandled_kinds{kind}                1 for each kind with due jobs and no handler on this Queue
//	litequeue_queue_paused{queue}                  1 for each paused queue
//	litequeue_queue_paused_since_timestamp_seconds{queue}
//	litequeue_kind_paused{kind}                    1 for each paused kind
//	litequeue_kind_paused_since_timestamp_seconds{kind}
//	litequeue_breaker_state{kind, state}           for each breaker not closed: 1 for its state, "open" or "half_open", 0 for the other
//	litequeue_breaker_cooldown_end_timestamp_seconds{kind}
//	litequeue_limit_running{kind}                  running jobs of a kind with MaxRunning
//	litequeue_limit_max{kind}                      its MaxRunning
//	litequeue_rate_limit_starts{kind}              starts of a kind with RateLimit in the window that ends now
//	litequeue_rate_limit_max{kind}                 its RateLimit's starts per window
//	litequeue_rate_limit_window_seconds{kind}      its RateLimit's window
//	litequeue_schedule_last_fire_timestamp_seconds{schedule}  when the schedule last enqueued a job; none before
//	litequeue_schedule_lag_seconds{schedule}       how long its next slot has been due; 0 until it is
//	litequeue_build_info{version, goversion}       1, with litequeue's module version and Go's
//
// Only a Queue with handlers reports unhandled kinds: one without, in a
// process that only enqueues or in the litequeue command's dashboard
// (litequeue serve), has a handler for none, and would report every kind
// with due jobs. A closed breaker has no series. A schedule's lag is
// missing when this machine cannot compute its next slot (an unknown time
// zone), and its last fire until it has fired.
//
// A series whose label value is not valid UTF-8 — a kind or queue name
// that an older version of litequeue, or the app's own SQL, wrote to the
// file — cannot be exported: the collector leaves it out of the scrape,
// and logs each such value once ([Collector.Logger]), so that the rest of
// the scrape, and the app's own metrics in the same registry, still
// arrive.
//
// Two collectors count what this process does, which cannot be read from
// the database: [Counters], fed by [litequeue.Options.OnEvent], counts
// jobs enqueued, started, completed, retried, dead and more, by queue and
// kind; [RunDurations], fed by a middleware, is the histogram of run
// durations by kind and outcome, litequeue_run_duration_seconds.
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
		"Jobs by queue and state; pending jobs are due or scheduled, waiting ones wait for their dependencies.", []string{"queue", "state"}, nil)
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

	q     *litequeue.Queue
	build prometheus.Metric // litequeue_build_info
	drops dropLog
}

// NewCollector returns the collector of q's figures.
func NewCollector(q *litequeue.Queue) *Collector {
	return &Collector{q: q, build: buildInfo()}
}

// Describe sends the descriptions of every metric.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jobsDesc, oldestDesc, retriesDesc, deathsDesc, unhandledDesc, buildInfoDesc} {
		ch <- d
	}
	describeFlow(ch)
}

// Collect reads the Queue's figures and sends them. The reads are
// [litequeue.Queue.Stats], [litequeue.Queue.FailuresLastHour],
// [litequeue.Queue.Limits] and [litequeue.Queue.Periodics]; the first
// that fails ends the scrape with its error.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	ch <- c.build
	s := &scrape{ch: ch, drop: func(err error) { c.drops.drop(c.Logger, err) }}
	stats, err := c.q.Stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(jobsDesc, err)
		return
	}
	s.queues(stats.Queues)
	if len(c.q.Handled()) > 0 {
		for _, kind := range stats.Unhandled {
			s.gauge(unhandledDesc, 1, kind)
		}
	}
	s.paused(stats.Paused)
	s.breakers(stats.Breakers)
	failures, err := c.q.FailuresLastHour(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(retriesDesc, err)
		return
	}
	s.failures(failures)
	limits, err := c.q.Limits(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(limitRunningDesc, err)
		return
	}
	s.limits(limits)
	schedules, err := c.q.Periodics(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(scheduleLagDesc, err)
		return
	}
	s.schedules(schedules)
}

// A scrape sends the series of one Collect.
type scrape struct {
	ch   chan<- prometheus.Metric
	drop func(error) // a series that cannot be exported: see dropLog
}

// gauge sends the gauge d of the given labels, or drops it if a label
// cannot be exported.
func (s *scrape) gauge(d *prometheus.Desc, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...)
	if err != nil {
		s.drop(err)
		return
	}
	s.ch <- m
}

// queues sends the jobs of each queue by state, and its oldest due job's
// wait.
func (s *scrape) queues(queues map[string]litequeue.QueueStats) {
	for name, qs := range queues {
		for state, n := range map[string]int{
			"due": qs.Due, "scheduled": qs.Scheduled, "waiting": qs.Waiting, "running": qs.Running, "dead": qs.Dead,
			"completed": qs.Completed, "discarded": qs.Discarded, "cancelled": qs.Cancelled, "expired": qs.Expired,
		} {
			s.gauge(jobsDesc, float64(n), name, state)
		}
		s.gauge(oldestDesc, qs.OldestDue.Seconds(), name)
	}
}

// failures sends the retries and deaths of the last hour by kind and
// error class.
func (s *scrape) failures(failures []litequeue.FailureCount) {
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
		s.gauge(retriesDesc, float64(n), k.kind, k.class)
	}
	for k, n := range deaths {
		s.gauge(deathsDesc, float64(n), k.kind, k.class)
	}
}

// A dropLog logs each problem that leaves a series out of a scrape, the
// first time it is met. The zero value is ready; it is safe for
// concurrent use.
type dropLog struct {
	mu   sync.Mutex
	seen map[string]bool // the problems logged
}

// drop logs err to log, or to slog.Default if log is nil, unless it was
// logged before.
func (d *dropLog) drop(log *slog.Logger, err error) {
	d.mu.Lock()
	seen := d.seen[err.Error()]
	if !seen {
		if d.seen == nil {
			d.seen = make(map[string]bool)
		}
		d.seen[err.Error()] = true
	}
	d.mu.Unlock()
	if seen {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Warn("litequeue prom: a series is left out of the scrape, and others with the same problem will be, unlogged", "err", err)
}
