package litequeue_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// deadWith enqueues one job of kind "k" per error text and runs them to
// death, each failing with its text; it returns their IDs in order.
func deadWith(tb testing.TB, q *litequeue.Queue, texts ...string) []int64 {
	tb.Helper()
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		var text string
		if err := job.Decode(&text); err != nil {
			return err
		}
		return litequeue.Permanent(errors.New(text))
	})
	ids := make([]int64, len(texts))
	for i, text := range texts {
		ids[i] = enqueue(tb, q, "k", text).ID
	}
	runDue(tb, q)
	return ids
}

func TestQueue_List_Cursor(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	all := deadWith(t, q, "a", "b", "c", "d", "e")
	enqueue(t, q, "other", nil) // pending, of no handled kind: not dead
	dead := litequeue.Dead
	for _, tc := range []struct {
		name string
		f    litequeue.Filter
		want []int64
	}{
		{"newest first", litequeue.Filter{State: dead, Desc: true, Limit: 2}, []int64{all[4], all[3]}},
		{"the next page", litequeue.Filter{State: dead, Desc: true, Before: all[3], Limit: 2}, []int64{all[2], all[1]}},
		{"the last page", litequeue.Filter{State: dead, Desc: true, Before: all[1], Limit: 2}, []int64{all[0]}},
		{"after a cursor", litequeue.Filter{State: dead, After: all[1], Limit: 2}, []int64{all[2], all[3]}},
		{"between", litequeue.Filter{State: dead, After: all[0], Before: all[4]}, all[1:4]},
		{"every state, newest first", litequeue.Filter{Desc: true, Limit: 2}, []int64{all[4] + 1, all[4]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, list(t, q, tc.f)); diff != "" {
				t.Errorf("List(%+v) IDs (-want +got):\n%s", tc.f, diff)
			}
		})
	}
}

func TestQueue_List_ErrorContains(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	all := deadWith(t, q, "dial tcp: connection refused", "Connection REFUSED by peer", "quota 100% used", "quota 100 used", "a_b", "axb", `open C:\tmp`)
	for _, tc := range []struct {
		text string
		want []int64
	}{
		{"connection refused", all[0:2]}, // ASCII letters match either case
		{"100%", all[2:3]},               // % is a character, not a wildcard
		{"a_b", all[4:5]},                // and so is _
		{`\`, all[6:7]},
		{"", all},
	} {
		f := litequeue.Filter{State: litequeue.Dead, ErrorContains: tc.text}
		if diff := cmp.Diff(tc.want, list(t, q, f)); diff != "" {
			t.Errorf("List(ErrorContains %q) IDs (-want +got):\n%s", tc.text, diff)
		}
	}
}

func TestQueue_Count(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	q, _ := openQueue(t, litequeue.Options{})
	all := deadWith(t, q, "refused", "refused", "timeout")
	enqueue(t, q, "other", nil)
	for _, tc := range []struct {
		f    litequeue.Filter
		want int
	}{
		{litequeue.Filter{}, 4},
		{litequeue.Filter{State: litequeue.Dead}, 3},
		{litequeue.Filter{State: litequeue.Dead, ErrorContains: "refused"}, 2},
		{litequeue.Filter{State: litequeue.Dead, Limit: 1}, 1},
		{litequeue.Filter{State: litequeue.Dead, Before: all[2]}, 2},
		{litequeue.Filter{State: litequeue.Pending}, 1},
		{litequeue.Filter{Kind: "none"}, 0},
	} {
		n, err := q.Count(ctx, tc.f)
		if err != nil {
			t.Fatalf("Count(%+v): %v", tc.f, err)
		}
		if n != tc.want {
			t.Errorf("Count(%+v) = %d, want %d", tc.f, n, tc.want)
		}
	}
	// Count is what ReplayDead then replays.
	f := litequeue.Filter{ErrorContains: "REFUSED"}
	want, _ := q.Count(ctx, litequeue.Filter{State: litequeue.Dead, ErrorContains: "REFUSED"})
	if n, err := q.ReplayDead(ctx, f); err != nil || n != want {
		t.Fatalf("ReplayDead(%+v) = %d, %v; want %d, nil", f, n, err, want)
	}
}

func TestFilter_Check(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	for _, tc := range []struct {
		f    litequeue.Filter
		want string
	}{
		{litequeue.Filter{After: -1}, "after -1 is negative (0: no bound)"},
		{litequeue.Filter{Before: -2}, "before -2 is negative (0: no bound)"},
	} {
		_, err := q.List(t.Context(), tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("List(%+v) = %v, want an error containing %q", tc.f, err, tc.want)
		}
		_, err = q.Count(t.Context(), tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Count(%+v) = %v, want an error containing %q", tc.f, err, tc.want)
		}
	}
}

// TestQueue_FilterErrors checks that List and ReplayDead refuse a filter
// no job can match (a state that does not exist, as a typo makes one) and
// a negative limit, rather than quietly returning nothing or everything.
func TestQueue_FilterErrors(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	enqueue(t, q, "k", nil)
	ctx := t.Context()
	for _, tt := range []struct {
		f    litequeue.Filter
		want string
	}{
		{litequeue.Filter{State: "PENDING"}, `unknown state "PENDING" (want waiting, pending, running, completed, dead, discarded, cancelled or expired)`},
		{litequeue.Filter{Limit: -1}, "limit -1 is negative (0: no limit)"},
	} {
		if jobs, err := q.List(ctx, tt.f); err == nil || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("List(%+v) = %d jobs, %v; want %q", tt.f, len(jobs), err, tt.want)
		}
		if n, err := q.ReplayDead(ctx, tt.f); err == nil || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("ReplayDead(%+v) = %d, %v; want %q", tt.f, n, err, tt.want)
		}
	}
}

// ids lists the jobs' IDs, in order; never nil.
func ids(jobs []*litequeue.Job) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func list(tb testing.TB, q *litequeue.Queue, f litequeue.Filter) []int64 {
	tb.Helper()
	jobs, err := q.List(tb.Context(), f)
	if err != nil {
		tb.Fatalf("List(%+v): %v", f, err)
	}
	return ids(jobs)
}
