package dashboard

import (
	"html/template"
	"net/http"
	"time"

	"github.com/litequeue/litequeue"
)

// throughputTotal adds up the points of a window, for the table under the
// charts.
func throughputTotal(points []litequeue.ThroughputPoint) litequeue.ThroughputPoint {
	var t litequeue.ThroughputPoint
	for _, p := range points {
		t.Completed += p.Completed
		t.Retried += p.Retried
		t.Dead += p.Dead
		t.Discarded += p.Discarded
		t.Cancelled += p.Cancelled
		t.Expired += p.Expired
	}
	return t
}

// throughputChart draws the completions, retries and deaths of each
// point, a column per point, the last one now.
func throughputChart(title string, points []litequeue.ThroughputPoint, ticks []tick) template.HTML {
	completed, retried, dead := make([]int, len(points)), make([]int, len(points)), make([]int, len(points))
	for i, p := range points {
		completed[i], retried[i], dead[i] = p.Completed, p.Retried, p.Dead
	}
	return barChart{
		Title: title,
		Series: []series{
			{Label: "completed", Class: "completed", Counts: completed},
			{Label: "retried", Class: "retried", Counts: retried},
			{Label: "dead", Class: "dead", Counts: dead},
		},
		Ticks: ticks,
	}.svg()
}

// throughput serves GET /throughput: the ends of runs and jobs per minute
// over the last hour and per hour over the last day, as charts of
// completions, retries and deaths, and the totals of every outcome.
func (h *handler) throughput(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	hour, err := h.q.Throughput(ctx, time.Hour, time.Minute)
	if err != nil {
		h.fail(w, err)
		return
	}
	day, err := h.q.Throughput(ctx, 24*time.Hour, time.Hour)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "throughput", map[string]any{
		"Title":     "Throughput",
		"Refresh":   true,
		"HourChart": throughputChart("Per minute, last hour", hour, agoTicks(len(hour), 10, "m")),
		"DayChart":  throughputChart("Per hour, last day", day, agoTicks(len(day), 6, "h")),
		"Hour":      throughputTotal(hour),
		"Day":       throughputTotal(day),
	})
}
