package litequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_Stats checks every figure of Stats against a known set of jobs
// on two queues, one of them running on a second Queue, with runs more and
// less than an hour old.
func TestQueue_Stats(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk, Retry: litequeue.Policy{Base: 2 * time.Second}})
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error {
		switch string(job.Payload) {
		case `"fail"`:
			return errors.New("boom")
		case `"temp"`:
			return &tempError{}
		case `"permanent"`:
			return litequeue.Permanent(errors.New("bad address"))
		case `"discard"`:
			return litequeue.ErrDiscard
		}
		return nil
	})
	q.Handle("fetch", func(ctx context.Context, job *litequeue.Job) error { panic("nil map") })
	ctx := t.Context()
	emails, reports := litequeue.OnQueue("emails"), litequeue.OnQueue("reports")

	// An hour before: a death that is out of the last hour by then.
	enqueue(t, q, "send", "permanent", emails)
	runDue(t, q)
	clk.Add(time.Hour)
	now := clk.Now()

	enqueue(t, q, "send", "ok", emails)                             // completed
	enqueue(t, q, "send", "fail", emails)                           // retry: scheduled
	enqueue(t, q, "send", "permanent", emails)                      // dead in the last hour
	enqueue(t, q, "send", "discard", emails)                        // discarded
	enqueue(t, q, "send", "ok", emails, litequeue.Delay(time.Hour)) // scheduled
	cancelled := enqueue(t, q, "send", "ok", emails, litequeue.Delay(time.Hour))
	enqueue(t, q, "send", "temp", reports) // retry: scheduled
	enqueue(t, q, "send", "temp", reports) // retry: scheduled
	enqueue(t, q, "fetch", nil, reports)   // panics: retry, scheduled
	if n := runDue(t, q); n != 7 {
		t.Fatalf("RunDue ran %d jobs, want 7", n)
	}
	if err := q.Cancel(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	// Due and not run: send has a handler here, render has none.
	enqueue(t, q, "send", "ok", emails, litequeue.At(now.Add(-5*time.Minute)))
	enqueue(t, q, "send", "ok", emails, litequeue.At(now.Add(-time.Minute)))
	enqueue(t, q, "render", nil, reports, litequeue.At(now.Add(-30*time.Second)))
	enqueue(t, q, "render", nil, reports)

	// Running, on another Queue on the same file.
	other := openAt(t, path, litequeue.Options{Clock: clk})
	g := newGate()
	other.Handle("slow", g.handle)
	enqueue(t, q, "slow", nil, reports)
	done := runDueAsync(other)
	<-g.started
	defer func() {
		close(g.release)
		<-done
	}()

	got, err := q.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := litequeue.Stats{
		Queues: map[string]litequeue.QueueStats{
			"emails":  {Due: 2, Scheduled: 2, Dead: 2, Completed: 1, Discarded: 1, Cancelled: 1, OldestDue: 5 * time.Minute},
			"reports": {Due: 2, Scheduled: 3, Running: 1, OldestDue: 30 * time.Second},
		},
		Unhandled: []string{"render"},
		RetriesLastHour: []litequeue.ErrorCount{
			{Kind: "send", ErrorClass: "*litequeue_test.tempError", Count: 2},
			{Kind: "fetch", ErrorClass: "string", Count: 1},
			{Kind: "send", ErrorClass: "*errors.errorString", Count: 1},
		},
		DeathsLastHour:        map[string]int{"send": 1},
		DeathsByClassLastHour: []litequeue.ErrorCount{{Kind: "send", ErrorClass: "*errors.errorString", Count: 1}},
		Paused:                []litequeue.Pause{},
		Breakers:              map[string]litequeue.BreakerStats{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Stats (-want +got):\n%s", diff)
	}
	if testing.Verbose() {
		t.Logf("Stats: %+v", got)
	}
}

// TestQueue_StatsEmpty checks the Stats of an empty queue: zero figures,
// and maps and slices that are empty, not nil.
func TestQueue_StatsEmpty(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	got, err := q.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := litequeue.Stats{
		Queues:                map[string]litequeue.QueueStats{},
		Unhandled:             []string{},
		RetriesLastHour:       []litequeue.ErrorCount{},
		DeathsLastHour:        map[string]int{},
		DeathsByClassLastHour: []litequeue.ErrorCount{},
		Paused:                []litequeue.Pause{},
		Breakers:              map[string]litequeue.BreakerStats{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Stats (-want +got):\n%s", diff)
	}
}

// TestQueue_StatsDeathsByClass checks the deaths of the last hour per kind
// and error class, most first, and that the deaths per kind are their sums.
func TestQueue_StatsDeathsByClass(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Clock: newMock()})
	fail := func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"temp"` {
			return litequeue.Permanent(&tempError{})
		}
		return errors.New("bad address")
	}
	q.Handle("send", fail)
	q.Handle("fetch", fail)
	once := litequeue.MaxTries(1)
	enqueue(t, q, "send", "temp", once)
	enqueue(t, q, "send", "other", once)
	enqueue(t, q, "fetch", "temp", once)
	enqueue(t, q, "send", "temp", once)
	if n := runDue(t, q); n != 4 {
		t.Fatalf("RunDue ran %d jobs, want 4", n)
	}
	got, err := q.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	wantClasses := []litequeue.ErrorCount{
		{Kind: "send", ErrorClass: "*litequeue_test.tempError", Count: 2},
		{Kind: "fetch", ErrorClass: "*litequeue_test.tempError", Count: 1},
		{Kind: "send", ErrorClass: "*errors.errorString", Count: 1},
	}
	if diff := cmp.Diff(wantClasses, got.DeathsByClassLastHour); diff != "" {
		t.Errorf("DeathsByClassLastHour (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"send": 3, "fetch": 1}, got.DeathsLastHour); diff != "" {
		t.Errorf("DeathsLastHour (-want +got):\n%s", diff)
	}
}

// tempError is an app's error type, to tell error classes apart.
type tempError struct{}

func (*tempError) Error() string { return "service unavailable" }
