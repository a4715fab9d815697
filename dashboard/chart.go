package dashboard

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// barChart is a bar chart of counts per column, one bar per series in
// each column, drawn as SVG on the server.
type barChart struct {
	Title  string
	Series []series
	Ticks  []tick // labels under the x axis
}

// series is one colour of bars: the fill that the page's style gives
// Class, one for light and one for dark mode (svg.chart in the style).
type series struct {
	Label  string
	Counts []int
	Class  string
}

// paint is the attribute that colours the series' bars and legend.
func (s series) paint() string {
	return `class="` + html.EscapeString(s.Class) + `"`
}

// tick labels the x axis under a column.
type tick struct {
	Column int
	Label  string
}

// The geometry of a chart, in pixels.
const (
	chartW, chartH        = 720, 220
	chartLeft, chartRight = 44, 10
	chartTop, chartBottom = 34, 26
	plotW                 = chartW - chartLeft - chartRight
	plotH                 = chartH - chartTop - chartBottom
)

// svg draws the chart. Every text in it is escaped; everything else is a
// number, so the result is safe to put in a page as it is.
func (c barChart) svg() template.HTML {
	columns := len(c.Series[0].Counts)
	top := 0
	for _, s := range c.Series {
		for _, n := range s.Counts {
			top = max(top, n)
		}
	}
	yMax, yStep := niceScale(float64(top), 4)
	y := func(v float64) float64 { return chartTop + plotH*(1-v/yMax) }
	col := float64(plotW) / float64(columns)
	bar := col * 0.8 / float64(len(c.Series))

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		chartW, chartH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="16" class="title">%s</text>`, chartLeft, html.EscapeString(c.Title))
	lx := float64(chartW - chartRight)
	for i := len(c.Series) - 1; i >= 0; i-- { // the legend, right-aligned
		s := c.Series[i]
		fmt.Fprintf(&b, `<text x="%.1f" y="16" text-anchor="end">%s</text>`, lx, html.EscapeString(s.Label))
		lx -= 5.6*float64(len([]rune(s.Label))) + 4
		fmt.Fprintf(&b, `<rect x="%.1f" y="7" width="10" height="10" %s/>`, lx-10, s.paint())
		lx -= 22
	}
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="grid"/>`, chartLeft, y(v), chartLeft+plotW, y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, chartLeft-6, y(v)+4, strconv.FormatFloat(v, 'f', -1, 64))
	}
	for i, s := range c.Series {
		fmt.Fprintf(&b, `<g %s data-series="%s">`, s.paint(), html.EscapeString(s.Label))
		for j, n := range s.Counts {
			if n == 0 {
				continue
			}
			x := chartLeft + col*float64(j) + col*0.1 + bar*float64(i)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" data-column="%d"><title>%d</title></rect>`,
				x, y(float64(n)), bar, chartTop+plotH-y(float64(n)), j, n)
		}
		b.WriteString(`</g>`)
	}
	fmt.Fprintf(&b, `<path d="M%d %d V%d H%d" class="axis"/>`, chartLeft, chartTop, chartTop+plotH, chartLeft+plotW)
	for _, t := range c.Ticks {
		x := chartLeft + col*float64(t.Column)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, x, chartH-8, html.EscapeString(t.Label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceScale returns the top of an axis that shows values up to hi, and the
// step between about ticks of its labels: 1, 2 or 5 times a power of ten,
// never under 1 (the charts count).
func niceScale(hi float64, ticks int) (top, step float64) {
	hi = max(hi, 1)
	raw := hi / float64(ticks)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	step = max(step, 1)
	return math.Ceil(hi/step) * step, step
}

// failureChart draws the last hour's retries and deaths per minute: 60
// columns, the last one the minute now is in.
func failureChart(counts []litequeue.FailureCount, now time.Time) template.HTML {
	const minutes = 60
	last := now.Truncate(time.Minute)
	retries, deaths := make([]int, minutes), make([]int, minutes)
	for _, c := range counts {
		i := minutes - 1 - int(last.Sub(c.Minute)/time.Minute)
		if i < 0 || i >= minutes {
			continue
		}
		retries[i] += c.Retries
		deaths[i] += c.Deaths
	}
	return barChart{
		Title:  "Retries and deaths per minute, last hour",
		Series: []series{{Label: "retries", Class: "retried", Counts: retries}, {Label: "deaths", Class: "dead", Counts: deaths}},
		Ticks:  agoTicks(minutes, 10, "m"),
	}.svg()
}

// agoTicks labels the x axis of a chart of columns that end now, every
// every columns, with how long ago each column began: "−60m" … "now".
func agoTicks(columns, every int, unit string) []tick {
	var ticks []tick
	for c := 0; c <= columns; c += every {
		label := "now"
		if c < columns {
			label = "−" + strconv.Itoa(columns-c) + unit
		}
		ticks = append(ticks, tick{c, label})
	}
	return ticks
}

// simColumns is how many columns the chart of a simulation has.
const simColumns = 60

// simulation is what the policies page simulates: Jobs jobs that fail
// together while a dependency is down for Outage.
type simulation struct {
	Jobs   int
	Outage time.Duration
}

// chart simulates the jobs under p and under p without jitter (or with
// full jitter, if p has none) and draws the retries of each per column.
func (sim simulation) chart(p litequeue.Policy) template.HTML {
	other, label, otherLabel := p, string(p.Jitter)+" jitter", "no jitter"
	other.Jitter = litequeue.NoJitter
	if p.Jitter == litequeue.NoJitter {
		other.Jitter, label, otherLabel = litequeue.FullJitter, "no jitter", "full jitter"
	}
	var end time.Duration
	for _, pol := range []litequeue.Policy{p, other} {
		sim.run(pol, func(t time.Duration) { end = max(end, t) })
	}
	width := niceWidth(end / simColumns)
	columns := int(end/width) + 1
	counts := func(pol litequeue.Policy) []int {
		c := make([]int, columns)
		sim.run(pol, func(t time.Duration) { c[int(t/width)]++ })
		return c
	}
	var ticks []tick
	for i := 0; i <= columns; i += max(columns/5, 1) {
		ticks = append(ticks, tick{i, litequeue.FormatDuration(width * time.Duration(i))})
	}
	return barChart{
		Title: fmt.Sprintf("Retries of %d jobs failing together during a %s outage, every %s",
			sim.Jobs, litequeue.FormatDuration(sim.Outage), litequeue.FormatDuration(width)),
		Series: []series{{Label: label, Class: "planned", Counts: counts(p)}, {Label: otherLabel, Class: "dead", Counts: counts(other)}},
		Ticks:  ticks,
	}.svg()
}

// niceWidth returns the narrowest column width of 1, 2 or 5 times a power
// of ten milliseconds that is at least d.
func niceWidth(d time.Duration) time.Duration {
	for w := time.Millisecond; ; w *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if m*w >= d {
				return m * w
			}
		}
	}
}

// run simulates the jobs under p: each runs first at 0 and fails while
// the time is under the outage, then runs again after p.Delay, up to
// p.MaxTries. It calls retry with the time of each retry. The jitter
// draws come from a PRNG of a fixed seed: the same chart each time.
func (sim simulation) run(p litequeue.Policy, retry func(t time.Duration)) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range sim.Jobs {
		var t time.Duration
		for try := 1; t < sim.Outage && try < p.MaxTries; try++ {
			t += p.Delay(try, rng.Float64())
			retry(t)
		}
	}
}
