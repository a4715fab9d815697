package litequeue_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// TestQueue_EnqueueMetadata carries a job's metadata from Enqueue to its
// event, its run, Get and List, also once the job has completed. A key
// given twice keeps its last value.
func TestQueue_EnqueueMetadata(t *testing.T) {
	t.Parallel()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record})
	want := map[string]string{"traceparent": "00-abc-def-01", "user": "ada"}
	var seen map[string]string
	q.Handle("mail", func(ctx context.Context, job *litequeue.Job) error {
		seen = job.Metadata
		return nil
	})
	j := enqueue(t, q, "mail", nil, litequeue.Metadata("user", "bob"),
		litequeue.Metadata("traceparent", "00-abc-def-01"), litequeue.Metadata("user", "ada"))
	if diff := cmp.Diff(want, j.Metadata); diff != "" {
		t.Errorf("Enqueue's job (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, ev.list[0].Job.Metadata); diff != "" {
		t.Errorf("job.enqueued's job (-want +got):\n%s", diff)
	}
	runDue(t, q)
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("the handler's job (-want +got):\n%s", diff)
	}
	if got := get(t, q, j.ID); got.State != litequeue.Completed || !cmp.Equal(want, got.Metadata) {
		t.Errorf("Get after the run: %s, metadata %v; want completed, %v", got.State, got.Metadata, want)
	}
	jobs, err := q.List(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, jobs[0].Metadata); diff != "" {
		t.Errorf("List's job (-want +got):\n%s", diff)
	}
	if got := enqueue(t, q, "mail", nil).Metadata; got != nil {
		t.Errorf("metadata of a job enqueued without: %v, want nil", got)
	}
}

// TestQueue_EnqueueManyMetadata gives every job of EnqueueMany the
// metadata, each a map of its own.
func TestQueue_EnqueueManyMetadata(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	jobs, err := q.EnqueueMany(t.Context(), "mail", []any{1, 2, 3}, litequeue.Metadata("batch", "b-7"))
	if err != nil {
		t.Fatal(err)
	}
	jobs[0].Metadata["batch"] = "changed"
	for _, j := range jobs[1:] {
		if got := j.Metadata["batch"]; got != "b-7" {
			t.Errorf("job %d returned with batch %q, want b-7", j.ID, got)
		}
	}
	for _, j := range jobs {
		if got := get(t, q, j.ID).Metadata["batch"]; got != "b-7" {
			t.Errorf("job %d stored with batch %q, want b-7", j.ID, got)
		}
	}
}

// TestQueue_EnqueueTxMetadata stores the metadata of a job enqueued in the
// caller's transaction.
func TestQueue_EnqueueTxMetadata(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var id int64
	err := q.WriteTx(t.Context(), func(tx *sqlx.Tx) error {
		j, err := q.EnqueueTx(t.Context(), tx, "mail", nil, litequeue.Metadata("order", "o-1"))
		if j != nil {
			id = j.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, q, id).Metadata["order"]; got != "o-1" {
		t.Errorf("order %q, want o-1", got)
	}
}

// TestQueue_UniqueKeyMetadata: a duplicate enqueue returns the live job
// with the metadata it was enqueued with, not the second call's.
func TestQueue_UniqueKeyMetadata(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	first := enqueue(t, q, "mail", nil, litequeue.UniqueKey("welcome"), litequeue.Metadata("try", "1"))
	dup := enqueue(t, q, "mail", nil, litequeue.UniqueKey("welcome"), litequeue.Metadata("try", "2"))
	if !dup.Duplicate || dup.ID != first.ID || dup.Metadata["try"] != "1" {
		t.Errorf("duplicate: %+v, want job %d with try 1", dup, first.ID)
	}
}

// TestQueue_EnqueueMetadataLimits refuses metadata out of bounds with an
// error naming the value and the limit, and writes nothing.
func TestQueue_EnqueueMetadataLimits(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var manyKeys []litequeue.EnqueueOption
	for i := range litequeue.MetadataKeysLimit + 1 {
		manyKeys = append(manyKeys, litequeue.Metadata("k"+itoa(int64(i)), ""))
	}
	tests := []struct {
		name string
		opts []litequeue.EnqueueOption
		want string
	}{
		{"too many keys", manyKeys, "metadata of 33 keys is over the limit of 32 keys"},
		{"too large", []litequeue.EnqueueOption{litequeue.Metadata("note", strings.Repeat("x", litequeue.MetadataSizeLimit))},
			"metadata of 4100 bytes is over the limit of 4096 bytes"},
		{"an empty key", []litequeue.EnqueueOption{litequeue.Metadata("", "v")}, `metadata with an empty key (value "v")`},
		{"a key not UTF-8", []litequeue.EnqueueOption{litequeue.Metadata("\xff", "v")}, `metadata key "\xff" is not valid UTF-8`},
		{"a value not UTF-8", []litequeue.EnqueueOption{litequeue.Metadata("k", "\xff")}, `metadata "k": value "\xff" is not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := q.Enqueue(t.Context(), "mail", nil, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Enqueue: %v, want an error containing %q", err, tt.want)
			}
			_, err = q.EnqueueMany(t.Context(), "mail", []any{1, 2}, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EnqueueMany: %v, want an error containing %q", err, tt.want)
			}
		})
	}
	// At the limits exactly, it is taken.
	full := litequeue.Metadata("note", strings.Repeat("x", litequeue.MetadataSizeLimit-len("note")))
	enqueue(t, q, "mail", nil, full)
	enqueue(t, q, "mail", nil, manyKeys[:litequeue.MetadataKeysLimit]...)
	if n, err := q.Count(t.Context(), litequeue.Filter{}); err != nil || n != 2 {
		t.Errorf("%d jobs (%v), want only the 2 at the limits", n, err)
	}
}

// TestQueue_GetBadMetadata reads a job whose metadata column the app
// overwrote with what is not a JSON object of strings: Get returns an
// error, it does not panic.
func TestQueue_GetBadMetadata(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	j := enqueue(t, q, "mail", nil)
	if _, err := q.DB().Exec(q.DB().Rebind(`UPDATE litequeue_jobs SET metadata = '[1, 2]' WHERE id = ?`), j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Get(t.Context(), j.ID); err == nil || !strings.Contains(err.Error(), "decode metadata column") {
		t.Errorf("Get: %v, want an error decoding the metadata column", err)
	}
}

// TestQueue_EnqueueMetadataMap sets every key of a map, beside Metadata.
func TestQueue_EnqueueMetadataMap(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	m := map[string]string{"traceparent": "00-1-2-01", "tracestate": "a=b"}
	j := enqueue(t, q, "k", nil, litequeue.MetadataMap(m), litequeue.Metadata("user", "ada"))
	m["traceparent"] = "changed"
	want := map[string]string{"traceparent": "00-1-2-01", "tracestate": "a=b", "user": "ada"}
	if diff := cmp.Diff(want, get(t, q, j.ID).Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}
