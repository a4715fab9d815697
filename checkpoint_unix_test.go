//go:build unix

package litequeue_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/litequeue/litequeue"
)

// TestProcess_CheckpointSurvivesKill: a process saves checkpoints and is
// killed with SIGKILL mid-run; once its lease expired, the job's next run,
// in another Queue, starts from the last checkpoint the killed process
// was told was saved.
func TestProcess_CheckpointSurvivesKill(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	clk := newMock()
	q := openAt(t, path, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	j := enqueue(t, q, "upload", nil)
	cmd, stdout, _ := startProc(t, "checkpoint", path)
	waitFor(t, "the process to save its third checkpoint", func() bool { return strings.Contains(stdout.String(), "saved 3") })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := stdout.String(); got != "resume none\nsaved 1\nsaved 2\nsaved 3\n" {
		t.Fatalf("the process printed %q", got)
	}

	resumed := make(chan []byte, 1)
	q.Handle("upload", func(ctx context.Context, job *litequeue.Job) error {
		resumed <- job.Checkpoint
		return nil
	})
	clk.Set(time.Now().Add(time.Minute)) // the killed process's lease, of 1s on its real clock, has expired
	// The rescue makes the job due again after the wait the killed
	// process's claim drew (its policy's, up to 50ms with jitter, which
	// may be 0: then this first call runs it too).
	ran := runDue(t, q)
	clk.Add(fixedPolicy.Base)
	if ran += runDue(t, q); ran != 1 {
		t.Fatalf("ran %d, want the rescued job once", ran)
	}
	if got := <-resumed; string(got) != "3" {
		t.Fatalf("the run after the kill resumed from %q, want 3", got)
	}
	if diff := cmp.Diff([]litequeue.Outcome{litequeue.OutcomeLeaseExpired, litequeue.OutcomeCompleted}, outcomes(history(t, q, j.ID))); diff != "" {
		t.Fatalf("history outcomes (-want +got):\n%s", diff)
	}
}
