package litequeuetest_test

import (
	"bytes"
	"testing"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/litequeuetest"
)

// TestRequireEnqueued_Sealed: on a Queue that seals its payloads, a job
// is found by its payload as given.
func TestRequireEnqueued_Sealed(t *testing.T) {
	t.Parallel()
	key := litequeue.SealKey{ID: "k1", Key: bytes.Repeat([]byte{1}, litequeue.SealKeySize)}
	q, _ := openQueue(t, litequeue.Options{SealKeys: []litequeue.SealKey{key}})
	want := enqueue(t, q, "email", welcome{To: "ada@example.com"})
	enqueue(t, q, "email", welcome{To: "bob@example.com"})
	got := litequeuetest.RequireEnqueued(t, q, "email", litequeuetest.Payload(welcome{To: "ada@example.com"}))
	if got.ID != want.ID {
		t.Fatalf("RequireEnqueued found job %d, want %d", got.ID, want.ID)
	}
}
