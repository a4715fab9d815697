//go:build unix

package litequeue_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// TestProcess_Expire enqueues, in this process, a job whose expiry is
// past on the real clock and one due without an expiry, and has another
// process claim: the claim expires the first before it claims the second,
// whose handler already sees the first expired, and the first never runs.
func TestProcess_Expire(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	clk := newMock()
	clk.Set(time.Now().Add(-2 * time.Hour))
	q := openAt(t, path, litequeue.Options{Clock: clk})
	late := enqueue(t, q, "timed", nil, litequeue.ExpireAfter(time.Hour))
	due := enqueue(t, q, "timed", nil)
	cmd, out, _ := startProc(t, "expire", path, itoa(late.ID))
	waitProc(t, cmd, time.Minute)
	if want := fmt.Sprintf("ran %d expired\ndone\n", due.ID); out.String() != want {
		t.Fatalf("the other process printed %q, want %q", out.String(), want)
	}
	if got := get(t, q, late.ID); got.State != litequeue.Expired {
		t.Fatalf("state %s, want expired", got.State)
	}
	h := history(t, q, late.ID)
	if len(h) != 1 || h[0].Outcome != litequeue.OutcomeExpired || !strings.HasSuffix(h[0].Worker, fmt.Sprintf(":%d", cmd.Process.Pid)) {
		t.Fatalf("history %+v, want one expired row by process %d", h, cmd.Process.Pid)
	}
}
