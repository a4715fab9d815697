package litequeue_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// TestOpen_MaxClockSkewLimit refuses a MaxClockSkew over a third of
// VisibilityTimeout, which leases could not absorb, with a *FieldError
// naming the value and the limit, and creates nothing; a third itself is
// taken.
func TestOpen_MaxClockSkewLimit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "q.db")
	_, err := litequeue.Open(path, litequeue.Options{VisibilityTimeout: 30 * time.Second, MaxClockSkew: 11 * time.Second})
	var fe *litequeue.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("Open with MaxClockSkew 11s of a 30s VisibilityTimeout = %v, want a *FieldError", err)
	}
	want := &litequeue.FieldError{Field: "max_clock_skew", Value: 11 * time.Second, Limit: 10 * time.Second}
	if diff := cmp.Diff(want, fe, cmpopts.IgnoreUnexported(litequeue.FieldError{})); diff != "" {
		t.Errorf("FieldError (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused Open left %s: %v", path, err)
	}
	q, err := litequeue.Open(path, litequeue.Options{VisibilityTimeout: 30 * time.Second, MaxClockSkew: 10 * time.Second})
	if err != nil {
		t.Fatalf("Open with MaxClockSkew a third of VisibilityTimeout: %v", err)
	}
	q.Close()
}
