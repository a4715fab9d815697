package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// pauseCase is one of the two things Pause stops: a kind or a queue.
type pauseCase struct {
	name          string
	pause, resume func(q *litequeue.Queue, ctx context.Context) error
	want          litequeue.Pause // as Stats reports it, Since set by the test
	// held is a job the pause holds back.
	held     []litequeue.EnqueueOption
	heldKind string
}

var pauseCases = []pauseCase{
	{
		name:     "kind",
		pause:    func(q *litequeue.Queue, ctx context.Context) error { return q.PauseKind(ctx, "a") },
		resume:   func(q *litequeue.Queue, ctx context.Context) error { return q.ResumeKind(ctx, "a") },
		want:     litequeue.Pause{Kind: "a"},
		heldKind: "a",
	},
	{
		name:     "queue",
		pause:    func(q *litequeue.Queue, ctx context.Context) error { return q.PauseQueue(ctx, "slow") },
		resume:   func(q *litequeue.Queue, ctx context.Context) error { return q.ResumeQueue(ctx, "slow") },
		want:     litequeue.Pause{Queue: "slow"},
		held:     []litequeue.EnqueueOption{litequeue.OnQueue("slow")},
		heldKind: "b",
	},
}

// TestQueue_Pause pauses a kind and a queue: RunDue runs nothing of it
// while the other kinds and queues run; a pause a second time keeps its
// first Since; Enqueue still adds jobs; after the resume they run.
func TestQueue_Pause(t *testing.T) {
	t.Parallel()
	for _, tc := range pauseCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			clk := newMock()
			q, _ := openQueue(t, litequeue.Options{Clock: clk})
			var ran []string
			record := func(ctx context.Context, job *litequeue.Job) error {
				ran = append(ran, job.Queue+"/"+job.Kind)
				return nil
			}
			q.Handle("a", record)
			q.Handle("b", record)
			held := enqueue(t, q, tc.heldKind, nil, tc.held...)
			free := enqueue(t, q, "b", nil) // queue default, kind b
			if err := tc.pause(q, ctx); err != nil {
				t.Fatal(err)
			}
			clk.Add(time.Minute)
			if err := tc.pause(q, ctx); err != nil { // again: nothing changes
				t.Fatal(err)
			}
			if got, want := runDue(t, q), 1; got != want {
				t.Fatalf("RunDue while paused ran %d, want %d (%v)", got, want, ran)
			}
			if got := get(t, q, free.ID).State; got != litequeue.Completed {
				t.Errorf("the job the pause does not hold is %s, want completed", got)
			}
			later := enqueue(t, q, tc.heldKind, nil, tc.held...) // Enqueue works while paused
			if _, ok, err := q.NextDue(ctx); err != nil || ok {
				t.Errorf("NextDue while only paused jobs are pending: ok %v, %v; want none", ok, err)
			}
			st, err := q.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Since = epoch
			if diff := cmp.Diff([]litequeue.Pause{want}, st.Paused); diff != "" {
				t.Errorf("Stats.Paused (-want +got):\n%s", diff)
			}
			for _, id := range []int64{held.ID, later.ID} {
				if got := get(t, q, id).State; got != litequeue.Pending {
					t.Errorf("job %d is %s while paused, want pending", id, got)
				}
			}
			if err := tc.resume(q, ctx); err != nil {
				t.Fatal(err)
			}
			if err := tc.resume(q, ctx); err != nil { // resuming what is not paused is fine
				t.Fatal(err)
			}
			if got, want := runDue(t, q), 2; got != want {
				t.Fatalf("RunDue after the resume ran %d, want %d", got, want)
			}
			if ps, err := q.Paused(ctx); err != nil || len(ps) != 0 {
				t.Errorf("Paused after the resume: %v, %v; want none", ps, err)
			}
		})
	}
}

// TestQueue_PauseInFlight pauses the kind of a running job: the run
// finishes normally, and a retry waiting keeps its RunAt while paused and
// does not run when it comes due, until the resume.
func TestQueue_PauseInFlight(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	g := newGate()
	var calls atomic.Int32
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if calls.Add(1) == 1 {
			return errors.New("first try fails")
		}
		return nil
	})
	q.Handle("slow", g.handle)
	running := enqueue(t, q, "slow", nil)
	done := runDueAsync(q)
	<-g.started
	if err := q.PauseKind(ctx, "slow"); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	if r := <-done; r.err != nil || r.n != 1 {
		t.Fatalf("RunDue = %d, %v; want the running job's run", r.n, r.err)
	}
	if got := get(t, q, running.ID).State; got != litequeue.Completed {
		t.Fatalf("the job running at the pause is %s, want completed", got)
	}

	retry := enqueue(t, q, "k", nil)
	runDue(t, q)
	waiting := get(t, q, retry.ID)
	if waiting.State != litequeue.Pending || waiting.Attempt != 1 {
		t.Fatalf("after its first try the job is %s, attempt %d; want pending, attempt 1", waiting.State, waiting.Attempt)
	}
	if err := q.PauseKind(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	clk.Set(waiting.RunAt.Add(time.Minute))
	if n := runDue(t, q); n != 0 {
		t.Fatalf("RunDue ran %d while the retry's kind was paused", n)
	}
	if got := get(t, q, retry.ID); !got.RunAt.Equal(waiting.RunAt) || got.State != litequeue.Pending {
		t.Errorf("paused retry: %s due %v, want pending due %v as before", got.State, got.RunAt, waiting.RunAt)
	}
	if err := q.ResumeKind(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n := runDue(t, q); n != 1 || get(t, q, retry.ID).State != litequeue.Completed {
		t.Fatalf("after the resume RunDue ran %d, job %s; want 1, completed", n, get(t, q, retry.ID).State)
	}
}

// TestQueue_PauseRefuses checks the errors of Pause and Resume: an empty
// name, named for what is missing, and a read-only Queue.
func TestQueue_PauseRefuses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	q, path := openQueue(t, litequeue.Options{})
	for _, tt := range []struct {
		call func() error
		want string
	}{
		{func() error { return q.PauseQueue(ctx, "") }, "pause queue: the queue's name is empty"},
		{func() error { return q.PauseKind(ctx, "") }, "pause kind: the kind's name is empty"},
		{func() error { return q.ResumeQueue(ctx, "") }, "resume queue: the queue's name is empty"},
		{func() error { return q.ResumeKind(ctx, "") }, "resume kind: the kind's name is empty"},
	} {
		if err := tt.call(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want an error saying %q", err, tt.want)
		}
	}
	if ps, err := q.Paused(ctx); err != nil || len(ps) != 0 {
		t.Errorf("Paused after the refusals: %v, %v; want none", ps, err)
	}
	if onPostgres {
		return // a server has no read-only Queue
	}
	ro := openReadOnly(t, path)
	if err := ro.PauseKind(ctx, "k"); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Errorf("PauseKind on a read-only Queue: %v, want ErrReadOnly", err)
	}
	if err := ro.ResumeQueue(ctx, "q"); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Errorf("ResumeQueue on a read-only Queue: %v, want ErrReadOnly", err)
	}
}

// TestWork_Pause pauses a kind under a running Work: it takes the other
// kind's jobs, leaves the paused kind's pending, and takes them at once
// after the resume, which wakes it without the clock moving.
func TestWork_Pause(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("a", func(context.Context, *litequeue.Job) error { return nil })
	q.Handle("b", func(context.Context, *litequeue.Job) error { return nil })
	if err := q.PauseKind(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	stop := startWork(t, q, litequeue.WorkerOptions{Concurrency: 4})
	defer stop()
	held := enqueue(t, q, "a", nil)
	other := enqueue(t, q, "b", nil)
	waitFor(t, "the other kind's job to complete", func() bool { return get(t, q, other.ID).State == litequeue.Completed })
	if got := get(t, q, held.ID).State; got != litequeue.Pending {
		t.Fatalf("the paused kind's job is %s, want pending", got)
	}
	if err := q.ResumeKind(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the resumed kind's job to complete", func() bool { return get(t, q, held.ID).State == litequeue.Completed })
}

// TestOpenReadOnly_OlderFileNothingPaused reads a file of schema version
// 3, which OpenReadOnly does not migrate and which has no table of
// pauses: nothing is paused, and Stats, Paused and NextDue work.
func TestOpenReadOnly_OlderFileNothingPaused(t *testing.T) {
	fileOnly(t, "OpenReadOnly opens a file")
	t.Parallel()
	ctx := t.Context()
	ro := openReadOnly(t, oldFile(t, 3))
	ro.Handle("k", func(context.Context, *litequeue.Job) error { return nil }, litequeue.RateLimit(1, time.Second))
	st, err := ro.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Paused == nil || len(st.Paused) != 0 {
		t.Errorf("Stats.Paused = %#v, want empty", st.Paused)
	}
	if ps, err := ro.Paused(ctx); err != nil || len(ps) != 0 {
		t.Errorf("Paused = %v, %v; want none", ps, err)
	}
	if _, _, err := ro.NextDue(ctx); err != nil {
		t.Errorf("NextDue: %v", err)
	}
}
