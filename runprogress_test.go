package litequeue_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestProgress_Coalesced: many reports at one instant make one write, the
// first; a report 250ms later on the Queue's clock is written at once;
// one held back is written at the run's end, and kept. Get and List read
// it.
func TestProgress_Coalesced(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	type seen struct{ AfterMany, AfterWait, HeldBack string }
	got := make(chan seen, 1)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		var s seen
		for i := 1; i <= 1000; i++ {
			litequeue.Progress(ctx, i, 1000)
		}
		s.AfterMany = get(t, q, job.ID).Progress.String()
		clk.Add(250 * time.Millisecond)
		litequeue.Progress(ctx, 1000, 1000)
		s.AfterWait = get(t, q, job.ID).Progress.String()
		litequeue.Progress(ctx, 7, 0)
		s.HeldBack = get(t, q, job.ID).Progress.String()
		got <- s
		return nil
	})
	j := enqueue(t, q, "k", nil)
	start := clk.Now()
	runDue(t, q)
	want := seen{AfterMany: "1 of 1000 (0%)", AfterWait: "1000 of 1000 (100%)", HeldBack: "1000 of 1000 (100%)"}
	if diff := cmp.Diff(want, <-got); diff != "" {
		t.Fatalf("progress read during the run (-want +got):\n%s", diff)
	}
	at := start.Add(250 * time.Millisecond)
	if p := get(t, q, j.ID).Progress; p == nil || p.Done != 7 || p.Total != 0 || !p.At.Equal(at) {
		t.Fatalf("progress after the run = %+v, want 7 of an unknown total at %v: the report held back", p, at)
	}
	jobs, err := q.List(t.Context(), litequeue.Filter{})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("List = %d jobs, %v", len(jobs), err)
	}
	if p := jobs[0].Progress; p == nil || p.String() != "7" {
		t.Fatalf("List's progress = %+v, want 7", p)
	}
	litequeue.Progress(t.Context(), 1, 2) // outside a run: nothing
}

// TestProgress_FlushedAtRenewal: a report held back is written at the
// run's next lease renewal, while the handler still runs.
func TestProgress_FlushedAtRenewal(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	reported, release := make(chan struct{}), make(chan struct{})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		litequeue.Progress(ctx, 1, 3)
		litequeue.Progress(ctx, 2, 3) // held back: the first was written at this instant
		close(reported)
		<-release
		return nil
	})
	j := enqueue(t, q, "k", nil)
	done := runDueAsync(q)
	<-reported
	if p := get(t, q, j.ID).Progress; p.String() != "1 of 3 (33%)" {
		t.Fatalf("progress before the renewal = %v, want the first report", p)
	}
	clk.Add(litequeue.DefaultVisibilityTimeout / 3) // the lease's renewal
	waitFor(t, "the renewal to write the report held back", func() bool {
		return get(t, q, j.ID).Progress.String() == "2 of 3 (66%)"
	})
	close(release)
	if r := <-done; r.err != nil || r.n != 1 {
		t.Fatalf("RunDue = %d, %v", r.n, r.err)
	}
}
