package prom_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/benbjohnson/clock"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/prom"
)

// TestRunDurations times runs through the middleware: one observation per
// run, by kind and outcome, a panic included.
func TestRunDurations(t *testing.T) {
	t.Parallel()
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{Clock: clock.NewMock()})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	durations := prom.NewRunDurations(nil)
	q.Use(durations.Middleware)
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error {
		switch string(job.Payload) {
		case `"fail"`:
			return errors.New("try later")
		case `"panic"`:
			panic("boom")
		case `"discard"`:
			return litequeue.ErrDiscard
		}
		return nil
	})
	for _, p := range []string{"ok", "ok", "fail", "panic", "discard"} {
		if _, err := q.Enqueue(t.Context(), "send", p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(prom.NewCollector(q), durations)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "litequeue_run_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["kind"]+" "+labels["outcome"]] = m.GetHistogram().GetSampleCount()
		}
	}
	want := map[string]uint64{"send completed": 2, "send failed": 1, "send panicked": 1, "send discarded": 1}
	if len(got) != len(want) {
		t.Errorf("histograms %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d runs timed, want %d", k, got[k], n)
		}
	}
}
