package dashboard_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue/dashboard"
)

// historyEnds counts, by scanning the demo's history (as the throughput
// does not), the runs of a window that completed, that failed and were
// retried, and after which the job went dead: what the throughput page
// must show for it. The window starts at from.
func (d *demo) historyEnds(t *testing.T, from time.Time) (completed, retried, dead int) {
	t.Helper()
	count := func(cond string) int {
		t.Helper()
		var n int
		err := d.q.DB().Get(&n, `SELECT COUNT(*) FROM litequeue_attempts WHERE finished_at >= ? AND `+cond, from.UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return count(`next_state = 'completed'`),
		count(`next_state = 'pending' AND outcome IN ('failed', 'panicked', 'timed_out', 'lease_expired')`),
		count(`next_state = 'dead'`)
}

// windows are the starts of the throughput page's windows at now: the
// hour's first minute and the day's first hour.
func windows(now time.Time) (hour, day time.Time) {
	return now.Truncate(time.Minute).Add(-59 * time.Minute), now.Truncate(time.Hour).Add(-23 * time.Hour)
}

// TestThroughputPage: the page shows the two charts, per minute over the
// last hour and per hour over the last day, with their legends and axes,
// and totals equal to what a scan of the history counts; the overview
// and the menu link to it.
func TestThroughputPage(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	code, body := get(t, srv.URL+"/throughput")
	if code != http.StatusOK {
		t.Fatalf("GET /throughput: %d", code)
	}
	contains(t, "the throughput page", body,
		"Per minute, last hour", "Per hour, last day", "−60m", "−24h", "now",
		`<g class="completed" data-series="completed">`, `<g class="retried" data-series="retried">`, `<g class="dead" data-series="dead">`)
	if n := len(regexp.MustCompile(`<svg class="chart"`).FindAllString(body, -1)); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
	hourFrom, dayFrom := windows(d.clk.Now())
	for _, w := range []struct {
		name string
		from time.Time
	}{{"hour", hourFrom}, {"day", dayFrom}} {
		completed, retried, dead := d.historyEnds(t, w.from)
		if completed == 0 || retried == 0 || dead == 0 {
			t.Fatalf("the demo's %s: %d completed, %d retried, %d dead; want some of each", w.name, completed, retried, dead)
		}
		for outcome, n := range map[string]int{"completed": completed, "retried": retried, "dead": dead} {
			cell := regexp.MustCompile(`id="` + w.name + `-` + outcome + `">(\d+)<`).FindStringSubmatch(body)
			if cell == nil || cell[1] != strconv.Itoa(n) {
				t.Errorf("%s %s: the page shows %v, the history counts %d", w.name, outcome, cell, n)
			}
		}
	}
	_, overview := get(t, srv.URL+"/")
	contains(t, "the overview", overview, `<a href="/throughput" id="throughput-link">`, `<a href="/throughput">Throughput</a>`)
}

// TestBrowser_Throughput follows the overview's link to the throughput
// page in a real browser: the bars of each chart add up to the counts
// that a scan of the history gives, the newest minute's bars stand in the
// last column, and in dark mode the chart's text and bars take the dark
// style's colours.
func TestBrowser_Throughput(t *testing.T) {
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	ctx := browser(t)
	visit(t, ctx, "open the overview", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#throughput-link")))
	visit(t, ctx, "follow the link to the throughput", chromedp.Click(chromedp.CSS("#throughput-link")),
		chromedp.WaitVisible(chromedp.CSS("table.throughput")))
	screenshot(t, ctx, "throughput", false)
	sum := func(chart int, series string) int {
		t.Helper()
		js := fmt.Sprintf(`[...document.querySelectorAll("svg.chart")[%d].querySelectorAll('g[data-series=%q] rect')]
			.reduce((n, r) => n + Number(r.textContent), 0)`, chart, series)
		return read(t, ctx, "add up the bars of "+series, chromedp.Evaluate[int](js))
	}
	hourFrom, dayFrom := windows(d.clk.Now())
	for chart, from := range []time.Time{hourFrom, dayFrom} {
		completed, retried, dead := d.historyEnds(t, from)
		if got := [3]int{sum(chart, "completed"), sum(chart, "retried"), sum(chart, "dead")}; got != [3]int{completed, retried, dead} {
			t.Errorf("chart %d: bars of completed, retried, dead add up to %v; the history counts %v", chart, got, [3]int{completed, retried, dead})
		}
	}
	last := `Math.max(...[...document.querySelectorAll("svg.chart")[0].querySelectorAll("rect[data-column]")].map(r => Number(r.dataset.column)))`
	if got := read(t, ctx, "read the last column with a bar", chromedp.Evaluate[int](last)); got != 59 {
		t.Errorf("the newest bar of the hour is in column %d, want 59 (the demo's last runs are in the minute now is in)", got)
	}
	colours := `[getComputedStyle(document.querySelector("svg.chart text.title")).fill,
		getComputedStyle(document.querySelector('svg.chart g[data-series="completed"] rect')).fill]`
	light := read(t, ctx, "read the light colours", chromedp.Evaluate[[]string](colours))
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	dark := read(t, ctx, "read the dark colours", chromedp.Evaluate[[]string](colours))
	want := [][]string{{"rgb(29, 35, 40)", "rgb(46, 139, 87)"}, {"rgb(221, 227, 232)", "rgb(92, 201, 138)"}}
	if got := [][]string{light, dark}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("title and completed bar colours, light then dark: %v, want %v", got, want)
	}
}
