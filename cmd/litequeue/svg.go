package main

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// The geometry of the SVG plot, in pixels.
const (
	svgWidth   = 960
	svgHeight  = 500
	svgLeft    = 80 // room for the y axis's labels
	svgRight   = 30 //
	svgTop     = 78 // room for the title and the legend
	svgBottom  = 62 // room for the x axis's labels
	svgPlotW   = svgWidth - svgLeft - svgRight
	svgPlotH   = svgHeight - svgTop - svgBottom
	svgFont    = `font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"`
	svgOutage  = "#ececec"
	svgAxis    = "#333333"
	svgGrid    = "#d8d8d8"
	svgSubtle  = "#555555"
	svgBarGap  = 0.12 // of a column, left empty between columns
	svgMaxTick = 6    // about how many labels the y axis has
)

// writeSVG writes the chart as an SVG plot: for each time bucket, a bar of
// retries per second without jitter beside one with the policy's jitter,
// over the shaded outage, with axes, a title and a legend, on the same
// scale as the terminal's. It is written by
// hand: an SVG document is a few lines of text.
func writeSVG(w io.Writer, ch *simChart) {
	n := len(ch.series[0].counts)
	yMax, yStep := niceScale(ch.rate(ch.maxCount()), svgMaxTick)
	p := &svgPlot{w: w, ch: ch, span: time.Duration(n) * ch.bucket, yMax: yMax}
	p.title()
	p.outage()
	p.grid(yStep)
	p.bars(n)
	p.axes()
	p.legend()
	fmt.Fprintln(w, `</svg>`)
}

// svgPlot is one SVG chart being written.
type svgPlot struct {
	w    io.Writer
	ch   *simChart
	span time.Duration // the time the plot spans
	yMax float64       // the rate at the top of the plot
}

// x is where the time t falls on the plot.
func (p *svgPlot) x(t time.Duration) float64 { return svgLeft + svgPlotW*float64(t)/float64(p.span) }

// y is where the rate r falls on the plot.
func (p *svgPlot) y(r float64) float64 { return svgTop + svgPlotH*(1-r/p.yMax) }

// title opens the SVG, and writes the title and the lines under it.
func (p *svgPlot) title() {
	w, ch := p.w, p.ch
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="13">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight, svgFont)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", svgWidth, svgHeight)
	text(w, svgLeft, 26, "start", `font-size="17" font-weight="bold"`,
		fmt.Sprintf("%d jobs fail together during a %v outage: what the dependency sees", ch.jobs, litequeue.FormatDuration(ch.outage)))
	text(w, svgLeft, 46, "start", `fill="`+svgSubtle+`"`,
		fmt.Sprintf("policy %s: %s", ch.name, describePolicy(ch.policy)))
	first, _, _ := strings.Cut(ch.conclusion(), "\n")
	text(w, svgLeft, 64, "start", `fill="`+svgSubtle+`"`, first)
}

// outage shades the outage, behind everything.
func (p *svgPlot) outage() {
	if end := min(p.ch.outage, p.span); end > 0 {
		fmt.Fprintf(p.w, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n",
			p.x(0), svgTop, p.x(end)-p.x(0), svgPlotH, svgOutage)
		text(p.w, p.x(end)-6, svgTop+16, "end", `fill="`+svgSubtle+`"`, "dependency down")
	}
}

// grid writes horizontal grid lines every yStep, and the y axis's labels.
func (p *svgPlot) grid(yStep float64) {
	for r := 0.0; r <= p.yMax+yStep/2; r += yStep {
		fmt.Fprintf(p.w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1"/>`+"\n",
			svgLeft, p.y(r), svgLeft+svgPlotW, p.y(r), svgGrid)
		text(p.w, svgLeft-8, p.y(r)+4, "end", "", fmtRate(r))
	}
	fmt.Fprintf(p.w, `<text transform="translate(20 %d) rotate(-90)" text-anchor="middle">retries per second</text>`+"\n",
		svgTop+svgPlotH/2)
}

// bars writes the n bars of each series: for each bucket, no jitter on
// the left, jitter on the right.
func (p *svgPlot) bars(n int) {
	w, ch := p.w, p.ch
	col := float64(svgPlotW) / float64(n)
	half := col * (1 - svgBarGap) / 2
	for i, s := range []*simSeries{ch.series[1], ch.series[0]} {
		fmt.Fprintf(w, `<g fill="%s">`+"\n", s.svgColor)
		for b, count := range s.counts {
			if count == 0 {
				continue
			}
			left := p.x(time.Duration(b)*ch.bucket) + col*svgBarGap/2 + float64(i)*half
			top := p.y(ch.rate(count))
			fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`+"\n",
				left, top, half, svgTop+svgPlotH-top)
		}
		fmt.Fprintln(w, `</g>`)
	}
}

// axes writes the axes, and the time axis's labels at round times.
func (p *svgPlot) axes() {
	w, ch := p.w, p.ch
	fmt.Fprintf(w, `<path d="M%d %d V%d H%d" fill="none" stroke="%s" stroke-width="1.2"/>`+"\n",
		svgLeft, svgTop, svgTop+svgPlotH, svgLeft+svgPlotW, svgAxis)
	for t := time.Duration(0); t <= p.span; t += tickStep(ch.bucket, 4) {
		tx := p.x(t)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n",
			tx, svgTop+svgPlotH, tx, svgTop+svgPlotH+5, svgAxis)
		text(w, tx, svgTop+svgPlotH+20, "middle", "", litequeue.FormatDuration(t))
	}
	text(w, svgLeft+svgPlotW/2, svgHeight-14, "middle", "",
		"time since the jobs first failed; "+strings.ToLower(ch.yLabel()[:1])+ch.yLabel()[1:])
}

// legend writes the legend, top right, with each series' summary.
func (p *svgPlot) legend() {
	w, ch := p.w, p.ch
	for i, s := range ch.series {
		ly := float64(svgTop + 14 + 20*i)
		lx := float64(svgLeft + svgPlotW - 330)
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="14" height="14" fill="%s"/>`+"\n", lx, ly-11, s.svgColor)
		summary := fmt.Sprintf("%s: at most %d retries in %v", s.label, s.peak, litequeue.FormatDuration(ch.res))
		if s.dead > 0 {
			summary += fmt.Sprintf(", %d dead", s.dead)
		}
		text(w, lx+20, ly, "start", "", summary)
	}
}

// text writes one SVG text element; attrs are extra attributes.
func text(w io.Writer, x, y float64, anchor, attrs, s string) {
	fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, attrs, html.EscapeString(s))
}

// niceScale returns the top of an axis that shows values up to hi, and the
// step between about ticks of its labels: 1, 2 or 5 times a power of ten.
func niceScale(hi float64, ticks int) (top, step float64) {
	if hi <= 0 {
		hi = 1
	}
	raw := hi / float64(ticks)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(hi/step) * step, step
}
