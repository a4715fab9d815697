package prom_test

import (
	"context"
	"errors"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/prom"
)

// flowPrefixes begin the names of the series of flow control and
// schedules.
var flowPrefixes = []string{"litequeue_queue_paused", "litequeue_kind_paused", "litequeue_breaker_", "litequeue_limit_", "litequeue_rate_limit_", "litequeue_schedule_"}

// flowSeries returns the series of series that report flow control and
// schedules.
func flowSeries(series map[string]float64) map[string]float64 { return only(series, flowPrefixes...) }

// TestCollector_Flow scrapes, over HTTP, a Queue with a paused queue and
// kind, a kind with limits, a kind whose breaker opens, and an hourly
// schedule, as they work on a mock clock: while the limited kind runs,
// while the breaker's probe runs, and between the runs. Every scrape is
// lint-free.
func TestCollector_Flow(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, clk *clock.Mock, open func(litequeue.Options) *litequeue.Queue) {
		q := open(litequeue.Options{})
		ctx := t.Context()
		srv := serve(t, prom.NewCollector(q))
		var mu sync.Mutex
		during := map[string]map[string]float64{} // the scrapes made by handlers, by name
		scrapeAs := func(name string) {
			series, err := scrape(srv.URL)
			if err != nil {
				t.Errorf("scrape %s: %v", name, err)
			}
			mu.Lock()
			during[name] = flowSeries(series)
			mu.Unlock()
		}
		q.Handle("render", func(ctx context.Context, job *litequeue.Job) error {
			if string(job.Payload) == `"scrape"` {
				scrapeAs("render")
			}
			return nil
		}, litequeue.MaxRunning(1), litequeue.RateLimit(5, time.Minute))
		q.Handle("charge", func(ctx context.Context, job *litequeue.Job) error {
			if job.Attempt == 2 {
				scrapeAs("probe")
			}
			return errors.New("card network down")
		}, litequeue.WithBreaker(litequeue.Breaker{Failures: 1, Cooldown: time.Minute}))
		if err := q.PauseQueue(ctx, "mail"); err != nil {
			t.Fatal(err)
		}
		if err := q.PauseKind(ctx, "report"); err != nil {
			t.Fatal(err)
		}
		if err := q.Periodic(ctx, "hourly", "0 * * * *", "render", "tick"); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"charge", "render"} {
			if _, err := q.Enqueue(ctx, kind, "scrape"); err != nil {
				t.Fatal(err)
			}
		}

		paused := map[string]float64{
			`litequeue_queue_paused{queue="mail"}`:                         1,
			`litequeue_queue_paused_since_timestamp_seconds{queue="mail"}`: unix(start),
			`litequeue_kind_paused{kind="report"}`:                         1,
			`litequeue_kind_paused_since_timestamp_seconds{kind="report"}`: unix(start),
			`litequeue_limit_max{kind="render"}`:                           1,
			`litequeue_rate_limit_max{kind="render"}`:                      5,
			`litequeue_rate_limit_window_seconds{kind="render"}`:           60,
			`litequeue_schedule_lag_seconds{schedule="hourly"}`:            0,
			`litequeue_limit_running{kind="render"}`:                       0,
			`litequeue_rate_limit_starts{kind="render"}`:                   0,
		}
		if diff := cmp.Diff(paused, flowSeries(mustScrape(t, srv.URL))); diff != "" {
			t.Errorf("before any run (-want +got):\n%s", diff)
		}

		// 10:00: the hourly slot fires; charge fails and opens its breaker
		// until 10:01; render runs, scraped as it runs, and the tick.
		clk.Set(start.Add(time.Hour))
		if n, err := q.RunDue(ctx); err != nil || n != 3 {
			t.Fatalf("RunDue at 10:00: %d runs, %v; want 3", n, err)
		}
		ten := start.Add(time.Hour)
		want := with(paused, map[string]float64{
			`litequeue_breaker_state{kind="charge",state="open"}`:               1,
			`litequeue_breaker_state{kind="charge",state="half_open"}`:          0,
			`litequeue_breaker_cooldown_end_timestamp_seconds{kind="charge"}`:   unix(ten.Add(time.Minute)),
			`litequeue_rate_limit_starts{kind="render"}`:                        2,
			`litequeue_schedule_last_fire_timestamp_seconds{schedule="hourly"}`: unix(ten),
		})
		if diff := cmp.Diff(want, flowSeries(mustScrape(t, srv.URL))); diff != "" {
			t.Errorf("at 10:00, after the runs (-want +got):\n%s", diff)
		}
		mu.Lock()
		got := during["render"]
		mu.Unlock()
		if got[`litequeue_limit_running{kind="render"}`] != 1 || got[`litequeue_limit_max{kind="render"}`] != 1 {
			t.Errorf("while render runs: %v, want render's limit_running 1 and limit_max 1 among them", got)
		}

		// 11:00:30: the slot of 11:00 has waited 30s; the breaker's
		// cool-down is over and charge's retry is due, which RunDue takes
		// as the probe: half-open while it runs, open again for 2m after.
		eleven := start.Add(2*time.Hour + 30*time.Second)
		clk.Set(eleven)
		want[`litequeue_schedule_lag_seconds{schedule="hourly"}`] = 30
		want[`litequeue_rate_limit_starts{kind="render"}`] = 0
		if diff := cmp.Diff(want, flowSeries(mustScrape(t, srv.URL))); diff != "" {
			t.Errorf("at 11:00:30, before RunDue (-want +got):\n%s", diff)
		}
		if n, err := q.RunDue(ctx); err != nil || n != 2 {
			t.Fatalf("RunDue at 11:00:30: %d runs, %v; want 2", n, err)
		}
		mu.Lock()
		probe := during["probe"]
		mu.Unlock()
		if probe[`litequeue_breaker_state{kind="charge",state="half_open"}`] != 1 || probe[`litequeue_breaker_state{kind="charge",state="open"}`] != 0 {
			t.Errorf("while the probe runs: %v, want charge half-open", probe)
		}
		want[`litequeue_schedule_lag_seconds{schedule="hourly"}`] = 0
		want[`litequeue_schedule_last_fire_timestamp_seconds{schedule="hourly"}`] = unix(eleven)
		want[`litequeue_rate_limit_starts{kind="render"}`] = 1
		want[`litequeue_breaker_cooldown_end_timestamp_seconds{kind="charge"}`] = unix(eleven.Add(2 * time.Minute))
		if diff := cmp.Diff(want, flowSeries(mustScrape(t, srv.URL))); diff != "" {
			t.Errorf("at 11:00:30, after the runs (-want +got):\n%s", diff)
		}

		// Resumed and reset: no series of them is left.
		for _, err := range []error{q.ResumeQueue(ctx, "mail"), q.ResumeKind(ctx, "report"), q.ResetBreaker(ctx, "charge")} {
			if err != nil {
				t.Fatal(err)
			}
		}
		for name := range flowSeries(mustScrape(t, srv.URL)) {
			if strings.Contains(name, "paused") || strings.Contains(name, "breaker") {
				t.Errorf("after resume and reset: %s", name)
			}
		}
	})
}

// with returns a copy of m with the values of more set.
func with(m, more map[string]float64) map[string]float64 {
	out := maps.Clone(m)
	maps.Copy(out, more)
	return out
}

// TestCollector_Unhandled scrapes the same database from a Queue with a
// handler and one without, as litequeue serve opens it: only the first
// reports the kind that no handler runs.
func TestCollector_Unhandled(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, clk *clock.Mock, open func(litequeue.Options) *litequeue.Queue) {
		worker := open(litequeue.Options{})
		worker.Handle("send", func(ctx context.Context, job *litequeue.Job) error { return nil })
		for _, kind := range []string{"send", "render"} {
			if _, err := worker.Enqueue(t.Context(), kind, nil); err != nil {
				t.Fatal(err)
			}
		}
		dashboard := open(litequeue.Options{})
		for _, tc := range []struct {
			name string
			q    *litequeue.Queue
			want []string
		}{
			{"with a handler", worker, []string{`litequeue_unhandled_kinds{kind="render"}`}},
			{"without", dashboard, nil},
		} {
			series := mustScrape(t, serve(t, prom.NewCollector(tc.q)).URL)
			got := slices.Sorted(maps.Keys(only(series, "litequeue_unhandled_kinds")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
			if series[`litequeue_jobs{queue="default",state="due"}`] != 2 {
				t.Errorf("%s: the due jobs are not in the scrape: %v", tc.name, series)
			}
		}
	})
}

// TestCollector_BuildInfo scrapes litequeue_build_info: one series, of
// this Go and of the version a test binary of litequeue's own module
// has, which has none.
func TestCollector_BuildInfo(t *testing.T) {
	t.Parallel()
	q, _ := openMock(t)
	series := mustScrape(t, serve(t, prom.NewCollector(q)).URL)
	want := `litequeue_build_info{goversion="` + runtime.Version() + `",version="(devel)"}`
	if series[want] != 1 {
		t.Errorf("scrape lacks %s 1:\n%v", want, series)
	}
}
