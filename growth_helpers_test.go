//go:build unix

package litequeue_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// fileSizes is what the file takes on disk and in pages.
type fileSizes struct {
	DB, WAL     int64 // bytes
	Pages, Free int   // page_count, freelist_count
}

func (s fileSizes) String() string {
	return fmt.Sprintf("file %s (%d pages, %d free), WAL %s", mib(s.DB), s.Pages, s.Free, mib(s.WAL))
}

func mib(n int64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }

func sizesOf(t *testing.T, q *litequeue.Queue, path string) fileSizes {
	t.Helper()
	var s fileSizes
	if fi, err := os.Stat(path); err == nil {
		s.DB = fi.Size()
	}
	if fi, err := os.Stat(path + "-wal"); err == nil {
		s.WAL = fi.Size()
	}
	if err := q.DB().Get(&s.Pages, `PRAGMA page_count`); err != nil {
		t.Fatal(err)
	}
	if err := q.DB().Get(&s.Free, `PRAGMA freelist_count`); err != nil {
		t.Fatal(err)
	}
	return s
}

// completeJobs enqueues n jobs with 200-byte payloads, in batches, and
// runs them all.
func completeJobs(t *testing.T, q *litequeue.Queue, n int) {
	t.Helper()
	pad := strings.Repeat("x", 200)
	for i := 0; i < n; i += 1000 {
		batch := make([]any, min(1000, n-i))
		for j := range batch {
			batch[j] = map[string]any{"n": i + j, "pad": pad}
		}
		if _, err := q.EnqueueMany(t.Context(), "k", batch); err != nil {
			t.Fatal(err)
		}
	}
	if got := runDue(t, q); got != n {
		t.Fatalf("RunDue ran %d jobs, want %d", got, n)
	}
}

// openGrowth opens a queue on a new file whose kind "k" succeeds.
func openGrowth(t *testing.T, opts litequeue.Options) (*litequeue.Queue, string) {
	t.Helper()
	opts.Synchronous = "normal"
	q, path := openQueue(t, opts)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	return q, path
}
