package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// Limits of "policy simulate".
const (
	maxSimJobs   = 1_000_000
	maxSimOutage = 30 * 24 * time.Hour
	simColumns   = 60 // about how many time buckets a chart has
	chartRows    = 10 // the height of a terminal chart, in lines
)

// simulate defines the flags of "policy simulate" and returns the
// command.
func (c *cli) simulate(fs *flagSet) runFunc {
	jobs := fs.Int("jobs", 1000, "how many `N` jobs fail together")
	outage := fs.durationFlag("outage", 30*time.Second, "how long the dependency is down: every attempt before it fails")
	svgPath := fs.String("svg", "", "also write the chart as an SVG plot to `file`")
	seed := fs.Uint64("seed", 1, "the seed of the jitter draws: the same seed, the same chart")
	asJSON := fs.Bool("json", false, "write the series as JSON instead of the chart")
	return func(ctx context.Context, args []string) error {
		switch {
		case *jobs < 1 || *jobs > maxSimJobs:
			return usageErrorf("--jobs %d is outside 1…%d", *jobs, maxSimJobs)
		case *outage == 0:
			return usageErrorf("--outage 0s: with no outage nothing fails (give its length, e.g. 30s)")
		case *outage > maxSimOutage:
			return usageErrorf("--outage %v is over the limit of %v", litequeue.FormatDuration(*outage), litequeue.FormatDuration(maxSimOutage))
		case *svgPath == "" && fs.isSet("svg"):
			return usageErrorf("--svg is empty: name the file to write")
		}
		shown, err := c.shownPolicies(ctx)
		if err != nil {
			return err
		}
		name, p, err := shown.lookup(c, args)
		if err != nil {
			return err
		}
		var svgFile *os.File
		if *svgPath != "" { // before the chart, so that a bad path prints nothing
			if svgFile, err = os.Create(*svgPath); err != nil {
				return err
			}
			defer svgFile.Close()
		}
		ch := newSimChart(name, p, *jobs, *outage, *seed)
		if *asJSON {
			if err := writeJSON(c.stdout, ch.json()); err != nil {
				return err
			}
		} else {
			c.writeChart(ch)
		}
		if svgFile == nil {
			return nil
		}
		return c.writeSVGFile(svgFile, ch)
	}
}

// writeSVGFile writes the chart as an SVG plot to f, and closes it.
func (c *cli) writeSVGFile(f *os.File, ch *simChart) error {
	w := &errWriter{w: f}
	writeSVG(w, ch)
	if err := cmp.Or(w.err, f.Close()); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "wrote %s\n", f.Name())
	return nil
}

// simChart is what a dependency sees when jobs fail together during an
// outage: retries per second over time, for a policy's jitter and
// without jitter. A column of the chart spans bucket; its height is the
// busiest stretch of width res inside it, as retries per second, so that
// a spike stays as high as it is however wide the columns are.
type simChart struct {
	name   string // the policy's
	policy litequeue.Policy
	jobs   int
	outage time.Duration
	bucket time.Duration // the width of one column
	res    time.Duration // the width over which attempts are counted
	series [2]*simSeries // jittered, then not
}

// simSeries is the simulation of one policy.
type simSeries struct {
	label    string // e.g. "full jitter"
	color    string // its colour on a terminal
	svgColor string
	counts   []int // per column: the most retries in one res
	attempts int
	dead     int           // jobs whose last try fell in the outage
	end      time.Duration // when the last attempt ran
	peak     int           // the most retries in one res
}

// simJSON is the output of "policy simulate --json". Durations are in
// milliseconds.
type simJSON struct {
	Policy       string          `json:"policy"`
	Jobs         int             `json:"jobs"`
	OutageMS     int64           `json:"outage_ms"`
	ColumnMS     int64           `json:"column_ms"`
	ResolutionMS int64           `json:"resolution_ms"`
	Series       []simSeriesJSON `json:"series"`
}

// simSeriesJSON is one series of "policy simulate --json".
type simSeriesJSON struct {
	Label       string `json:"label"`
	Attempts    int    `json:"attempts"`
	Dead        int    `json:"dead"`
	EndMS       int64  `json:"end_ms"`
	PeakRetries int    `json:"peak_retries"` // in one resolution
	Columns     []int  `json:"columns"`      // per column: the most retries in one resolution
}

// json returns the chart's JSON form.
func (ch *simChart) json() simJSON {
	out := simJSON{Policy: ch.name, Jobs: ch.jobs, OutageMS: ch.outage.Milliseconds(),
		ColumnMS: ch.bucket.Milliseconds(), ResolutionMS: ch.res.Milliseconds()}
	for _, s := range ch.series {
		out.Series = append(out.Series, simSeriesJSON{s.label, s.attempts, s.dead, s.end.Milliseconds(), s.peak, s.counts})
	}
	return out
}

// newSimChart simulates jobs jobs that first run at 0 and fail while the
// time is under outage, under p and under p without jitter, with jitter
// draws from a PRNG seeded with seed.
func newSimChart(name string, p litequeue.Policy, jobs int, outage time.Duration, seed uint64) *simChart {
	jittered, flat := p, p
	flat.Jitter = litequeue.NoJitter
	label := jitterName(p.Jitter)
	if p.Jitter == litequeue.NoJitter {
		// The policy has none: show what full jitter would change.
		jittered.Jitter = litequeue.FullJitter
		label = "full jitter (not the policy's)"
	}
	ch := &simChart{name: name, policy: p, jobs: jobs, outage: outage}
	ch.series[0] = &simSeries{label: label, color: green, svgColor: "#1f77b4"}
	ch.series[1] = &simSeries{label: "no jitter", color: red, svgColor: "#d62728"}
	pols := [2]litequeue.Policy{jittered, flat}
	var end time.Duration
	for i, s := range ch.series {
		simRun(pols[i], jobs, outage, seed, func(t time.Duration, try int) {
			end = max(end, t)
			s.end = max(s.end, t)
		})
	}
	ch.bucket = bucketWidth(end)
	ch.res = resolution(ch.bucket, outage)
	cols, fine := int(end/ch.bucket)+1, int(end/ch.res)+1
	for i, s := range ch.series {
		// The columns show retries: the first attempts, all at 0, are the
		// same with jitter or without.
		attempts, retries := make([]int, fine), make([]int, fine)
		s.dead = simRun(pols[i], jobs, outage, seed, func(t time.Duration, try int) {
			f := int(t / ch.res)
			attempts[f]++
			if try > 1 {
				retries[f]++
			}
		})
		s.counts = make([]int, cols)
		per := int(ch.bucket / ch.res)
		for f, n := range retries {
			s.counts[f/per] = max(s.counts[f/per], n)
			s.attempts += attempts[f]
			s.peak = max(s.peak, n)
		}
	}
	return ch
}

// resolution returns the width over which a chart of columns of width
// bucket counts attempts: a three-hundredth of the outage, at most a second,
// never wider than a column and dividing it, and never under a
// thousandth of one.
func resolution(bucket, outage time.Duration) time.Duration {
	want := min(bucket, time.Second, max(outage/300, time.Millisecond))
	for i := len(bucketSteps) - 1; i >= 0; i-- {
		r := bucketSteps[i]
		if r <= want && bucket%r == 0 && bucket/r <= 1000 {
			return r
		}
	}
	return bucket
}

// simRun runs jobs jobs under p: each runs first at 0, fails while the time
// is under outage and succeeds after, and after a failure runs again at the
// time plus p.Delay, up to p.MaxTries. It calls visit for each attempt, in
// no particular order, and returns how many jobs died.
func simRun(p litequeue.Policy, jobs int, outage time.Duration, seed uint64, visit func(t time.Duration, try int)) (dead int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for range jobs {
		var t time.Duration
		for try := 1; ; try++ {
			visit(t, try)
			if t >= outage {
				break // it succeeded
			}
			if try >= p.MaxTries {
				dead++
				break
			}
			t += p.Delay(try, rng.Float64())
		}
	}
	return dead
}

// bucketSteps are the widths a chart's columns may have.
var bucketSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second,
	10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// bucketWidth returns the narrowest column width that shows the span from
// 0 to end in about simColumns columns.
func bucketWidth(end time.Duration) time.Duration {
	for _, w := range bucketSteps {
		if int(end/w) < simColumns {
			return w
		}
	}
	w := bucketSteps[len(bucketSteps)-1]
	for int(end/w) >= simColumns {
		w *= 2
	}
	return w
}

// rate returns attempts per second for a count of attempts in one res.
func (ch *simChart) rate(count int) float64 {
	return float64(count) / ch.res.Seconds()
}

// conclusion says what the charts show in a sentence.
func (ch *simChart) conclusion() string {
	var at []string
	var t time.Duration
	for try := 1; try < ch.policy.MaxTries && t < ch.outage; try++ {
		t += ch.policy.MaxDelay(try)
		at = append(at, litequeue.FormatDuration(t))
	}
	if len(at) == 0 {
		return "No job retries: the outage is over before the first one fails."
	}
	when := at[0]
	if len(at) > 1 {
		when = strings.Join(at[:len(at)-1], ", ") + " and " + at[len(at)-1]
	}
	return fmt.Sprintf("Without jitter all %d jobs retry at the same instants: %s.\nWith %s the retries spread out: at most %d in any %v.",
		ch.jobs, when, ch.series[0].label, ch.series[0].peak, litequeue.FormatDuration(ch.res))
}

// yLabel says what the height of a column is.
func (ch *simChart) yLabel() string {
	if ch.res == ch.bucket {
		return fmt.Sprintf("Retries per second, a column for each %v", litequeue.FormatDuration(ch.bucket))
	}
	return fmt.Sprintf("Retries per second, a column for each %v showing its busiest %v", litequeue.FormatDuration(ch.bucket), litequeue.FormatDuration(ch.res))
}

// maxCount returns the largest bucket of either series.
func (ch *simChart) maxCount() int {
	m := 1
	for _, s := range ch.series {
		for _, n := range s.counts {
			m = max(m, n)
		}
	}
	return m
}

// blocks are the eighths of a character cell, from empty to full.
var blocks = []string{" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}

// writeChart writes the simulation as two bar charts on one scale, with a
// summary of each.
func (c *cli) writeChart(ch *simChart) {
	w := c.stdout
	fmt.Fprintf(w, "policy %s: %s\n", ch.name, describePolicy(ch.policy))
	fmt.Fprintf(w, "%d jobs fail together at 0s; the dependency is down until %v, then every attempt succeeds.\n",
		ch.jobs, litequeue.FormatDuration(ch.outage))
	fmt.Fprintf(w, "%s:\n", ch.yLabel())
	top := ch.maxCount()
	for _, s := range ch.series {
		fmt.Fprintf(w, "\n%s\n", c.paintCell(s.color, s.label))
		c.writeBars(w, ch, s, top)
	}
	fmt.Fprintf(w, "\n%s\n", ch.conclusion())
	for _, s := range ch.series {
		fmt.Fprintf(w, "%s: %d attempts; at most %d retries in one %v (%s/s); ",
			s.label, s.attempts, s.peak, litequeue.FormatDuration(ch.res), fmtRate(ch.rate(s.peak)))
		if s.dead > 0 {
			fmt.Fprintf(w, "%d of %d jobs died in the outage.\n", s.dead, ch.jobs)
		} else {
			fmt.Fprintf(w, "all done by %v.\n", fmtAge(s.end))
		}
	}
}

// writeBars writes one series as a bar chart of chartRows lines, scaled so
// that a bucket of top attempts fills the height, with its axes.
func (c *cli) writeBars(w io.Writer, ch *simChart, s *simSeries, top int) {
	label := fmtRate(ch.rate(top))
	pad := max(len(label), 1)
	eighths := make([]int, len(s.counts))
	for i, n := range s.counts {
		eighths[i] = (n*chartRows*8 + top/2) / top
		if n > 0 && eighths[i] == 0 {
			eighths[i] = 1 // a bucket with anything in it shows
		}
	}
	for row := chartRows - 1; row >= 0; row-- {
		var b strings.Builder
		for _, e := range eighths {
			b.WriteString(blocks[min(max(e-row*8, 0), 8)])
		}
		axis := "│"
		y := ""
		switch row {
		case chartRows - 1:
			axis, y = "┤", label
		}
		bars := strings.TrimRight(b.String(), " ")
		if bars != "" {
			bars = c.paintCell(s.color, bars)
		}
		fmt.Fprintf(w, "%*s %s%s\n", pad, y, axis, bars)
	}
	fmt.Fprintf(w, "%*s └%s\n", pad, "0", strings.Repeat("─", len(s.counts)))
	fmt.Fprintf(w, "%*s  %s\n", pad, "", timeAxis(len(s.counts), ch.bucket))
}

// tickStep returns the time between the labels of a time axis whose
// columns are bucket wide: a round duration that is a whole number of
// columns, at least minCols of them.
func tickStep(bucket time.Duration, minCols int) time.Duration {
	for _, step := range bucketSteps {
		if step%bucket == 0 && int(step/bucket) >= minCols {
			return step
		}
	}
	return bucket * time.Duration(minCols)
}

// timeAxis returns the labels under a chart of n columns of width bucket.
func timeAxis(n int, bucket time.Duration) string {
	var b strings.Builder
	step := tickStep(bucket, 8)
	for t := time.Duration(0); int(t/bucket) < n; t += step {
		col := int(t / bucket)
		b.WriteString(strings.Repeat(" ", max(col-b.Len(), 0)))
		b.WriteString(litequeue.FormatDuration(t))
	}
	return b.String()
}

// fmtRate shows a rate of attempts per second.
func fmtRate(r float64) string {
	if r >= 10 || r == float64(int64(r)) {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

// writeSVGFile writes the chart as an SVG plot to path.
