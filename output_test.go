package litequeue_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// receipt is the output the tests' handlers record.
type receipt struct {
	Order int    `json:"order"`
	Note  string `json:"note"`
}

// TestRecordOutput_StoredWithCompletion: the output a handler records is
// stored with the completion and read by Get, JSON-encoded; []byte is
// kept byte for byte; the last call wins.
func TestRecordOutput_StoredWithCompletion(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("json", func(ctx context.Context, job *litequeue.Job) error {
		if err := litequeue.RecordOutput(ctx, receipt{Order: 1, Note: "first"}); err != nil {
			return err
		}
		if got := get(t, q, job.ID).Output; got != nil {
			t.Errorf("output before the completion = %q, want none", got)
		}
		return litequeue.RecordOutput(ctx, receipt{Order: 2, Note: "second"})
	})
	q.Handle("raw", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.RecordOutput(ctx, []byte{0xff, 0x00, 'x'})
	})
	q.Handle("none", ok)
	j1, j2, j3 := enqueue(t, q, "json", nil), enqueue(t, q, "raw", nil), enqueue(t, q, "none", nil)
	if n := runDue(t, q); n != 3 {
		t.Fatalf("ran %d, want 3", n)
	}
	got := get(t, q, j1.ID)
	if got.State != litequeue.Completed || string(got.Output) != `{"order":2,"note":"second"}` {
		t.Fatalf("job %s with output %q, want completed with the second output", got.State, got.Output)
	}
	var r receipt
	if err := got.DecodeOutput(&r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(receipt{Order: 2, Note: "second"}, r); diff != "" {
		t.Fatalf("DecodeOutput (-want +got):\n%s", diff)
	}
	if got := get(t, q, j2.ID).Output; !bytes.Equal(got, []byte{0xff, 0x00, 'x'}) {
		t.Fatalf("raw output = %q, want the bytes as given", got)
	}
	none := get(t, q, j3.ID)
	if none.Output != nil {
		t.Fatalf("output of a handler that recorded none = %q", none.Output)
	}
	if err := none.DecodeOutput(&r); err == nil || !strings.Contains(err.Error(), "no output") {
		t.Fatalf("DecodeOutput of no output = %v, want an error saying so", err)
	}
	jobs, err := q.List(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Output != nil {
			t.Fatalf("List filled job %d's output; only Get reads it", j.ID)
		}
	}
}

// TestRecordOutput_NotCompleted: a run that fails stores no output; the
// retry that completes stores its own.
func TestRecordOutput_NotCompleted(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if err := litequeue.RecordOutput(ctx, job.Attempt); err != nil {
			return err
		}
		if job.Attempt == 1 {
			return errors.New("boom")
		}
		return nil
	})
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	if got := get(t, q, j.ID); got.State != litequeue.Pending || got.Output != nil {
		t.Fatalf("after a failed run: %s with output %q, want pending with none", got.State, got.Output)
	}
	clk.Add(time.Hour)
	runDue(t, q)
	if got := get(t, q, j.ID); got.State != litequeue.Completed || string(got.Output) != "2" {
		t.Fatalf("after the retry: %s with output %q, want completed with 2", got.State, got.Output)
	}
}

// TestRecordOutput_Bounded: an output over MaxOutput is refused with its
// size and the limit, and leaves the value recorded before it; a negative
// MaxOutput is refused at Open; outside a run RecordOutput is an error.
func TestRecordOutput_Bounded(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{MaxOutput: 10})
	refused := make(chan error, 1)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if err := litequeue.RecordOutput(ctx, "kept"); err != nil {
			return err
		}
		refused <- litequeue.RecordOutput(ctx, "0123456789")
		return nil
	})
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	err := <-refused
	if err == nil || !strings.Contains(err.Error(), "output of 12 bytes is over the limit of 10 bytes") {
		t.Fatalf("RecordOutput over the bound = %v, want its size and the limit", err)
	}
	if got := get(t, q, j.ID); got.State != litequeue.Completed || string(got.Output) != `"kept"` {
		t.Fatalf("%s with output %q, want completed with the output before the refused one", got.State, got.Output)
	}
	if err := litequeue.RecordOutput(t.Context(), "x"); err == nil || !strings.Contains(err.Error(), "not a handler's") {
		t.Fatalf("RecordOutput outside a run = %v, want an error saying so", err)
	}
	var fe *litequeue.FieldError
	if _, err := openBackend(t, t.TempDir()+"/neg.db", litequeue.Options{MaxOutput: -1}); !errors.As(err, &fe) || fe.Field != "max_output" {
		t.Fatalf("Open with MaxOutput -1 = %v, want a FieldError of max_output", err)
	}
}

// TestRecordOutput_StaleHolder: a holder whose lease expired and whose
// job another Queue ran again records an output, and returns: its
// completion is refused, and so is its output; the live run's stands.
func TestRecordOutput_StaleHolder(t *testing.T) {
	t.Parallel()
	q, j, staleErr := staleRun(t,
		func(ctx context.Context) error { return litequeue.RecordOutput(ctx, "stale") },
		func(ctx context.Context) error { return litequeue.RecordOutput(ctx, "live") })
	if staleErr != nil {
		t.Fatalf("the stale holder's RecordOutput = %v, want nil: kept in memory, refused at the settle", staleErr)
	}
	if got := get(t, q, j.ID); got.Attempt != 2 || string(got.Output) != `"live"` {
		t.Fatalf("attempt %d with output %q, want attempt 2's output, the live holder's", got.Attempt, got.Output)
	}
}

// staleRun plays a holder that lost its lease: q1's handler waits at a
// gate while q2, whose clock passes the lease, rescues the job and runs
// it again with live; then q1's handler calls stale and returns what it
// returned. staleRun returns q1, the job, and what stale returned, once
// q1's run has ended.
func staleRun(t *testing.T, stale, live func(ctx context.Context) error) (*litequeue.Queue, *litequeue.Job, error) {
	t.Helper()
	clk1, clk2 := newMock(), newMock()
	q1, path := openQueue(t, litequeue.Options{Clock: clk1, Retry: fixedPolicy})
	q2 := openAt(t, path, litequeue.Options{Clock: clk2, Retry: fixedPolicy})
	g := newGate()
	staleErr := make(chan error, 1)
	q1.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		g.handle(ctx, job)
		err := stale(ctx)
		staleErr <- err
		return err
	})
	q2.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return live(ctx) })
	j := enqueue(t, q1, "k", nil)
	first := runDueAsync(q1)
	<-g.started

	clk2.Add(litequeue.DefaultVisibilityTimeout)
	runDue(t, q2) // the lease expired: rescued, due again in 10s
	clk2.Add(10 * time.Second)
	if n := runDue(t, q2); n != 1 {
		t.Fatalf("q2 ran %d, want the job again", n)
	}
	close(g.release)
	err := <-staleErr
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	return q1, j, err
}

// TestRecordOutput_DeletedWithJob: Delete and retention delete a job's
// output with it.
func TestRecordOutput_DeletedWithJob(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.RecordOutput(ctx, job.ID)
	})
	deleted, purged := enqueue(t, q, "k", nil), enqueue(t, q, "k", nil)
	runDue(t, q)
	if n := outputRows(t, q); n != 2 {
		t.Fatalf("%d outputs stored, want 2", n)
	}
	if err := q.Delete(t.Context(), deleted.ID); err != nil {
		t.Fatal(err)
	}
	if n := outputRows(t, q); n != 1 {
		t.Fatalf("%d outputs after Delete, want 1", n)
	}
	clk.Add(litequeue.DefaultKeepFinished)
	runDue(t, q) // purges it
	if exists(t, q, purged.ID) {
		t.Fatal("the completed job was not purged")
	}
	if n := outputRows(t, q); n != 0 {
		t.Fatalf("%d outputs after the purge, want 0", n)
	}
}

// TestRecordOutput_Sealed: on a Queue with SealKeys the output is stored
// sealed, and Get opens it.
func TestRecordOutput_Sealed(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{SealKeys: []litequeue.SealKey{sealKey("k1", 1)}})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.RecordOutput(ctx, "secret")
	})
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	if got := get(t, q, j.ID).Output; string(got) != `"secret"` {
		t.Fatalf("Get's output = %q, want it opened", got)
	}
	var stored []byte
	if err := q.DB().GetContext(t.Context(), &stored, q.DB().Rebind(`SELECT output FROM litequeue_outputs WHERE job_id = ?`), j.ID); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte("secret")) {
		t.Fatalf("the stored output %q holds the value in the clear", stored)
	}
}

// outputRows counts the stored outputs.
func outputRows(tb testing.TB, q *litequeue.Queue) int {
	tb.Helper()
	var n int
	if err := q.DB().GetContext(tb.Context(), &n, `SELECT count(*) FROM litequeue_outputs`); err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestLoadConfig_MaxOutput: [queue] max_output sets Options.MaxOutput.
func TestLoadConfig_MaxOutput(t *testing.T) {
	t.Parallel()
	got := loadConfig(t, "[queue]\nmax_output = 2048\n")
	want := defaultOptions()
	want.MaxOutput = 2048
	if diff := diffOptions(want, got); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
}

// TestRecordOutput_CompleteTx: the output of a run whose job CompleteTx
// completed is stored with the run's end, also when the handler returns
// an error after the commit (the job stays completed).
func TestRecordOutput_CompleteTx(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{Retry: fixedPolicy})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if err := litequeue.RecordOutput(ctx, "in the commit"); err != nil {
			return err
		}
		if err := completeInAppTx(ctx, q, job); err != nil {
			return err
		}
		return errors.New("after the commit")
	})
	j := enqueue(t, q, "k", nil)
	runDue(t, q)
	if got := get(t, q, j.ID); got.State != litequeue.Completed || string(got.Output) != `"in the commit"` {
		t.Fatalf("%s with output %q, want completed with the recorded output", got.State, got.Output)
	}
}
