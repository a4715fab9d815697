package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
)

// TestEnqueue_ServerStopped stops the server for good: Enqueue tries again
// for litequeue.ServerRetry and fails with ErrServerGone, or fails so when
// its context ends first; reads fail the same way.
func TestEnqueue_ServerStopped(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	q := open(t, srv.DSN, clock.NewMock())
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)

	start := time.Now()
	_, err := q.Enqueue(t.Context(), "k", nil)
	took := time.Since(start)
	if !errors.Is(err, litequeue.ErrServerGone) || errors.Is(err, litequeue.ErrCommitUnknown) {
		t.Errorf("Enqueue with the server stopped = %v, want ErrServerGone (and not ErrCommitUnknown)", err)
	}
	if took < litequeue.ServerRetry || took > litequeue.ServerRetry+5*time.Second {
		t.Errorf("Enqueue failed after %v, want after about %v of retries", took, litequeue.ServerRetry)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start = time.Now()
	_, err = q.Enqueue(ctx, "k", nil)
	took = time.Since(start)
	if !errors.Is(err, litequeue.ErrServerGone) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Enqueue with a context of 1s = %v, want ErrServerGone and context.DeadlineExceeded", err)
	}
	if took > 3*time.Second {
		t.Errorf("Enqueue with a context of 1s failed after %v", took)
	}

	ctx, cancel = context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := q.List(ctx, litequeue.Filter{}); !errors.Is(err, litequeue.ErrServerGone) {
		t.Errorf("List with the server stopped = %v, want ErrServerGone", err)
	}
}
