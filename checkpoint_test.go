package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestCheckpoint_ResumesNextAttempt: a checkpoint is durable when
// Checkpoint returns, before the run ends; the next attempt reads the last
// one back at its claim; the first attempt has none.
func TestCheckpoint_ResumesNextAttempt(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	seen := make(chan []byte, 2)
	q.Handle("upload", func(ctx context.Context, job *litequeue.Job) error {
		seen <- job.Checkpoint
		if job.Attempt > 1 {
			var part int
			if err := job.DecodeCheckpoint(&part); err != nil {
				return err
			}
			return litequeue.RecordOutput(ctx, part)
		}
		for part := 1; part <= 2; part++ {
			if err := litequeue.Checkpoint(ctx, part); err != nil {
				return err
			}
		}
		if got := get(t, q, job.ID).Checkpoint; string(got) != "2" {
			t.Errorf("checkpoint read during the run = %q, want 2: saved before Checkpoint returns", got)
		}
		return errors.New("connection reset at part 3")
	})
	j := enqueue(t, q, "upload", nil)
	runDue(t, q)
	clk.Add(time.Hour)
	runDue(t, q)
	if first, second := <-seen, <-seen; first != nil || string(second) != "2" {
		t.Fatalf("the runs saw checkpoints %q and %q, want none and 2", first, second)
	}
	if got := get(t, q, j.ID); got.State != litequeue.Completed || string(got.Output) != "2" || string(got.Checkpoint) != "2" {
		t.Fatalf("%s, output %q, checkpoint %q; want completed from part 2, the checkpoint kept", got.State, got.Output, got.Checkpoint)
	}
}

// TestCheckpoint_Bounded: a checkpoint over MaxCheckpoint is refused with
// its size and the limit, and leaves the one saved before; outside a run
// Checkpoint is an error.
func TestCheckpoint_Bounded(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	refused := make(chan error, 1)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if err := litequeue.Checkpoint(ctx, "kept"); err != nil {
			return err
		}
		refused <- litequeue.Checkpoint(ctx, []byte(strings.Repeat("x", litequeue.MaxCheckpoint+1)))
		return nil
	})
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	if err := <-refused; err == nil || !strings.Contains(err.Error(), "checkpoint of 65537 bytes is over the limit of 65536 bytes") {
		t.Fatalf("Checkpoint over the bound = %v, want its size and the limit", err)
	}
	if got := get(t, q, j.ID).Checkpoint; string(got) != `"kept"` {
		t.Fatalf("checkpoint %q, want the one before the refused one", got)
	}
	if err := litequeue.Checkpoint(t.Context(), "x"); err == nil || !strings.Contains(err.Error(), "not a handler's") {
		t.Fatalf("Checkpoint outside a run = %v, want an error saying so", err)
	}
}

// TestCheckpoint_StaleHolder: a holder whose lease expired and whose job
// another Queue ran again cannot save a checkpoint: ErrLeaseLost, and the
// live run's checkpoint stands.
func TestCheckpoint_StaleHolder(t *testing.T) {
	t.Parallel()
	q, j, staleErr := staleRun(t,
		func(ctx context.Context) error { return litequeue.Checkpoint(context.WithoutCancel(ctx), "stale") },
		func(ctx context.Context) error { return litequeue.Checkpoint(ctx, "live") })
	if !errors.Is(staleErr, litequeue.ErrLeaseLost) {
		t.Fatalf("the stale holder's Checkpoint = %v, want ErrLeaseLost", staleErr)
	}
	if got := get(t, q, j.ID).Checkpoint; string(got) != `"live"` {
		t.Fatalf("checkpoint %q, want the live holder's", got)
	}
}

// TestCheckpoint_Replay: a replay of a dead job starts from its
// checkpoint; after ResetCheckpoint it starts over. Delete deletes the
// checkpoint with the job.
func TestCheckpoint_Replay(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	seen := make(chan string, 4)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		seen <- string(job.Checkpoint)
		if job.Checkpoint != nil {
			return nil
		}
		if err := litequeue.Checkpoint(ctx, "step 3"); err != nil {
			return err
		}
		return litequeue.Permanent(errors.New("bad gateway"))
	})
	kept, reset := enqueue(t, q, "k", nil), enqueue(t, q, "k", nil)
	runDue(t, q)
	<-seen
	<-seen
	if err := q.ResetCheckpoint(t.Context(), reset.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{kept.ID, reset.ID} {
		if err := q.Replay(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	runDue(t, q)
	got := map[string]bool{<-seen: true, <-seen: true}
	if !got[`"step 3"`] || !got[""] {
		t.Fatalf("the replays saw checkpoints %v, want one from step 3 and one from scratch", got)
	}
	if got := get(t, q, kept.ID); got.State != litequeue.Completed || string(got.Checkpoint) != `"step 3"` {
		t.Fatalf("the kept job is %s with checkpoint %q", got.State, got.Checkpoint)
	}
	if err := q.ResetCheckpoint(t.Context(), 999); !errors.Is(err, litequeue.ErrNotFound) {
		t.Fatalf("ResetCheckpoint of no job = %v, want ErrNotFound", err)
	}
	if err := q.Delete(t.Context(), kept.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	query := q.DB().Rebind(`SELECT count(*) FROM litequeue_checkpoints WHERE job_id = ?`)
	if err := q.DB().GetContext(t.Context(), &n, query, kept.ID); err != nil || n != 0 {
		t.Fatalf("%d checkpoints of the deleted job left (%v), want 0", n, err)
	}
}

// TestCheckpoint_Copy: Copy carries a dead job's checkpoint to the copy,
// whose replay resumes from it.
func TestCheckpoint_Copy(t *testing.T) {
	t.Parallel()
	from, _ := openQueue(t, litequeue.Options{})
	to, _ := openQueue(t, litequeue.Options{})
	from.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if err := litequeue.Checkpoint(ctx, []byte("\xffpart 7")); err != nil {
			return err
		}
		return litequeue.Permanent(errors.New("gateway gone"))
	})
	enqueue(t, from, "k", nil)
	runDue(t, from)
	if _, err := litequeue.Copy(t.Context(), from, to); err != nil {
		t.Fatal(err)
	}
	dead, err := to.List(t.Context(), litequeue.Filter{State: litequeue.Dead})
	if err != nil || len(dead) != 1 {
		t.Fatalf("%d dead jobs in the copy (%v), want 1", len(dead), err)
	}
	if got := get(t, to, dead[0].ID).Checkpoint; string(got) != "\xffpart 7" {
		t.Fatalf("the copy's checkpoint = %q, want the source's", got)
	}
}
