package prom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/litequeue/litequeue"
)

// The gauges of flow control and schedules: what is paused, the breakers
// that are not closed, the use of each limit, and each schedule's last
// fire and lag. The Collector reads them at each scrape.

var (
	queuePausedDesc = prometheus.NewDesc("litequeue_queue_paused",
		"1 for each paused queue.", []string{"queue"}, nil)
	queuePausedSinceDesc = prometheus.NewDesc("litequeue_queue_paused_since_timestamp_seconds",
		"When each paused queue was paused, in seconds since the Unix epoch.", []string{"queue"}, nil)
	kindPausedDesc = prometheus.NewDesc("litequeue_kind_paused",
		"1 for each paused kind.", []string{"kind"}, nil)
	kindPausedSinceDesc = prometheus.NewDesc("litequeue_kind_paused_since_timestamp_seconds",
		"When each paused kind was paused, in seconds since the Unix epoch.", []string{"kind"}, nil)
	breakerStateDesc = prometheus.NewDesc("litequeue_breaker_state",
		"1 for the state of each kind's circuit breaker that is not closed, 0 for its other state.", []string{"kind", "state"}, nil)
	breakerUntilDesc = prometheus.NewDesc("litequeue_breaker_cooldown_end_timestamp_seconds",
		"When the cool-down of each breaker that is not closed ends, in seconds since the Unix epoch.", []string{"kind"}, nil)
	limitRunningDesc = prometheus.NewDesc("litequeue_limit_running",
		"Running jobs of each kind with a MaxRunning limit.", []string{"kind"}, nil)
	limitMaxDesc = prometheus.NewDesc("litequeue_limit_max",
		"The MaxRunning limit of each kind that has one.", []string{"kind"}, nil)
	rateStartsDesc = prometheus.NewDesc("litequeue_rate_limit_starts",
		"Starts of each kind with a RateLimit in its window that ends now.", []string{"kind"}, nil)
	rateMaxDesc = prometheus.NewDesc("litequeue_rate_limit_max",
		"The starts that the RateLimit of each kind that has one lets through per window.", []string{"kind"}, nil)
	rateWindowDesc = prometheus.NewDesc("litequeue_rate_limit_window_seconds",
		"The window of the RateLimit of each kind that has one.", []string{"kind"}, nil)
	scheduleFiredDesc = prometheus.NewDesc("litequeue_schedule_last_fire_timestamp_seconds",
		"When each schedule last enqueued a job, in seconds since the Unix epoch.", []string{"schedule"}, nil)
	scheduleLagDesc = prometheus.NewDesc("litequeue_schedule_lag_seconds",
		"How long each schedule's next slot has been due; 0 while it is still to come.", []string{"schedule"}, nil)
)

// describeFlow sends the descriptions of the gauges of this file.
func describeFlow(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		queuePausedDesc, queuePausedSinceDesc, kindPausedDesc, kindPausedSinceDesc,
		breakerStateDesc, breakerUntilDesc,
		limitRunningDesc, limitMaxDesc, rateStartsDesc, rateMaxDesc, rateWindowDesc,
		scheduleFiredDesc, scheduleLagDesc,
	} {
		ch <- d
	}
}

// breakerStates are the states of a breaker that is not closed, as
// [litequeue.BreakerStats] names them: one series each.
var breakerStates = []string{"open", "half_open"}

// paused sends a series for each paused queue and kind, and when it was
// paused.
func (s *scrape) paused(pauses []litequeue.Pause) {
	for _, p := range pauses {
		since := unixSeconds(p.Since)
		if p.Queue != "" {
			s.gauge(queuePausedDesc, 1, p.Queue)
			s.gauge(queuePausedSinceDesc, since, p.Queue)
		} else {
			s.gauge(kindPausedDesc, 1, p.Kind)
			s.gauge(kindPausedSinceDesc, since, p.Kind)
		}
	}
}

// unixSeconds returns t in seconds since the Unix epoch, to the
// millisecond that litequeue stores.
func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1e3 }

// breakers sends, for each breaker that is not closed, a series per state
// that is 1 for its own, and the end of its cool-down.
func (s *scrape) breakers(breakers map[string]litequeue.BreakerStats) {
	for kind, b := range breakers {
		for _, state := range breakerStates {
			v := 0.0
			if b.State == state {
				v = 1
			}
			s.gauge(breakerStateDesc, v, kind, state)
		}
		s.gauge(breakerUntilDesc, unixSeconds(b.Until), kind)
	}
}

// limits sends the use of each kind's limits: those it has.
func (s *scrape) limits(limits []litequeue.LimitStats) {
	for _, l := range limits {
		if l.MaxRunning > 0 {
			s.gauge(limitRunningDesc, float64(l.Running), l.Kind)
			s.gauge(limitMaxDesc, float64(l.MaxRunning), l.Kind)
		}
		if l.RateLimit > 0 {
			s.gauge(rateStartsDesc, float64(l.Starts), l.Kind)
			s.gauge(rateMaxDesc, float64(l.RateLimit), l.Kind)
			s.gauge(rateWindowDesc, l.RatePer.Seconds(), l.Kind)
		}
	}
}

// schedules sends each schedule's lag, if this machine knows its next
// slot, and its last fire, if it has fired.
func (s *scrape) schedules(schedules []litequeue.PeriodicInfo) {
	for _, p := range schedules {
		if !p.NextSlot.IsZero() {
			s.gauge(scheduleLagDesc, p.Lag.Seconds(), p.Name)
		}
		if !p.LastFired.IsZero() {
			s.gauge(scheduleFiredDesc, unixSeconds(p.LastFired), p.Name)
		}
	}
}
