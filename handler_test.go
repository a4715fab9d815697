package litequeue_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestQueue_HandlePanics checks the set-up mistakes Handle refuses.
func TestQueue_HandlePanics(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{Policies: map[string]litequeue.Policy{"slow": {MaxTries: 3}}})
	ok := func(ctx context.Context, job *litequeue.Job) error { return nil }
	q.Handle("taken", ok, litequeue.UsePolicy("slow"))
	for _, tt := range []struct {
		name string
		call func()
		want string
	}{
		{"empty kind", func() { q.Handle("", ok) }, "empty kind"},
		{"nil handler", func() { q.Handle("k", nil) }, `Handle("k") with a nil handler`},
		{"twice", func() { q.Handle("taken", ok) }, `Handle("taken") twice`},
		{"unknown policy", func() { q.Handle("k", ok, litequeue.UsePolicy("fast")) }, `unknown policy "fast" (Options.Policies has [slow])`},
		{"negative timeout", func() { q.Handle("k", ok, litequeue.WithTimeout(-1)) }, "negative timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tt.want) {
					t.Fatalf("panic %v, want one containing %q", r, tt.want)
				}
			}()
			tt.call()
		})
	}
}

// TestQueue_NamedPolicy uses a named policy's MaxTries and delays.
func TestQueue_NamedPolicy(t *testing.T) {
	q, _ := openQueue(t, litequeue.Options{
		Retry:    litequeue.Policy{MaxTries: 5},
		Policies: map[string]litequeue.Policy{"once": {MaxTries: 1}},
	})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return context.Canceled }, litequeue.UsePolicy("once"))
	j := enqueue(t, q, "k", nil)
	if j.MaxTries != 1 {
		t.Fatalf("enqueued job has MaxTries %d, want its handler's policy's 1", j.MaxTries)
	}
	runDue(t, q)
	if got := get(t, q, j.ID); got.State != litequeue.Dead {
		t.Fatalf("state %s after one failed try, want dead", got.State)
	}
}
