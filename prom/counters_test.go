package prom_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/prom"
)

// TestCounters counts, through Wrap, the events of a Queue's work on a
// mock clock, and scrapes them over HTTP beside the Collector and
// RunDurations, linting the whole: one counter per event type, by queue
// and kind, while the app's own OnEvent still sees every event.
func TestCounters(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, clk *clock.Mock, open func(litequeue.Options) *litequeue.Queue) {
		counters := prom.NewCounters()
		appSaw := map[string]int{} // OnEvent is called one call at a time
		q := open(litequeue.Options{OnEvent: counters.Wrap(func(ev litequeue.Event) { appSaw[ev.Type]++ })})
		durations := prom.NewRunDurations(nil) // beside them in the scrape, which promlint checks whole
		q.Use(durations.Middleware)
		q.Handle("send", func(ctx context.Context, job *litequeue.Job) error {
			switch string(job.Payload) {
			case `"fail"`:
				return errors.New("try later")
			case `"bad"`:
				return litequeue.Permanent(errors.New("no such address"))
			case `"drop"`:
				return litequeue.ErrDiscard
			case `"snooze"`:
				return litequeue.Snooze(time.Hour)
			}
			return nil
		})
		ctx := t.Context()
		mail := litequeue.OnQueue("mail")
		var bad *litequeue.Job
		for _, p := range []string{"ok", "fail", "bad", "drop", "snooze"} {
			j, err := q.Enqueue(ctx, "send", p, mail)
			if err != nil {
				t.Fatal(err)
			}
			if p == "bad" {
				bad = j
			}
		}
		later, err := q.Enqueue(ctx, "send", "later", mail, litequeue.Delay(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Cancel(ctx, later.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Enqueue(ctx, "render", nil, litequeue.OnQueue("pdf"), litequeue.ExpireAfter(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, err := q.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if err := q.Replay(ctx, bad.ID); err != nil {
			t.Fatal(err)
		}
		// 09:02: render has expired; fail's retry and the replayed bad run,
		// and go dead or wait again.
		clk.Add(2 * time.Minute)
		if _, err := q.RunDue(ctx); err != nil {
			t.Fatal(err)
		}

		srv := serve(t, prom.NewCollector(q), counters, durations)
		want := map[string]float64{
			`litequeue_jobs_enqueued_total{kind="send",queue="mail"}`:  6,
			`litequeue_jobs_enqueued_total{kind="render",queue="pdf"}`: 1,
			`litequeue_jobs_started_total{kind="send",queue="mail"}`:   7,
			`litequeue_jobs_completed_total{kind="send",queue="mail"}`: 1,
			`litequeue_jobs_retried_total{kind="send",queue="mail"}`:   2,
			`litequeue_jobs_snoozed_total{kind="send",queue="mail"}`:   1,
			`litequeue_jobs_dead_total{kind="send",queue="mail"}`:      2,
			`litequeue_jobs_discarded_total{kind="send",queue="mail"}`: 1,
			`litequeue_jobs_cancelled_total{kind="send",queue="mail"}`: 1,
			`litequeue_jobs_replayed_total{kind="send",queue="mail"}`:  1,
			`litequeue_jobs_expired_total{kind="render",queue="pdf"}`:  1,
		}
		if diff := cmp.Diff(want, only(mustScrape(t, srv.URL), "litequeue_jobs_")); diff != "" {
			t.Errorf("counters (-want +got):\n%s", diff)
		}
		wantSaw := map[string]int{"job.enqueued": 7, "job.started": 7, "job.completed": 1, "job.retry": 2, "job.snoozed": 1,
			"job.dead": 2, "job.discarded": 1, "job.cancelled": 1, "job.replayed": 1, "job.expired": 1}
		if diff := cmp.Diff(wantSaw, appSaw); diff != "" {
			t.Errorf("the app's OnEvent saw (-want +got):\n%s", diff)
		}
	})
}

// TestCounters_BadNames counts events whose queue or kind is not valid
// UTF-8, as a job written by an older version or the app's SQL has: they
// are not counted, each value is logged once, and the good ones still
// are.
func TestCounters_BadNames(t *testing.T) {
	t.Parallel()
	counters := prom.NewCounters()
	var logs bytes.Buffer
	counters.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	for _, job := range []litequeue.Job{
		{Queue: "mail", Kind: "send\xff"},
		{Queue: "mail", Kind: "send\xff"},
		{Queue: "mail\xfe", Kind: "send"},
		{Queue: "mail", Kind: "send"},
	} {
		counters.OnEvent(litequeue.Event{Type: "job.started", Job: job})
	}
	counters.OnEvent(litequeue.Event{Type: "job.run_now", Job: litequeue.Job{Queue: "mail", Kind: "send"}}) // not counted
	got := only(mustScrape(t, serve(t, counters).URL), "litequeue_jobs_")
	want := map[string]float64{`litequeue_jobs_started_total{kind="send",queue="mail"}`: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counters (-want +got):\n%s", diff)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Errorf("%d warnings, want 2 (one per bad value):\n%s", n, &logs)
	}
}
