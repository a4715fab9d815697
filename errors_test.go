package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_CancelJob returns CancelJob from a handler with tries left: the
// run ends the job as cancelled, recorded with its error, not retried, not
// counted as a failure, and fires job.cancelled.
func TestQueue_CancelJob(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text, class string
		ret               error
	}{
		{"an error", "account 7 closed", "*errors.errorString", litequeue.CancelJob(errors.New("account 7 closed"))},
		{"wrapped", "sync: account 7 closed", "*errors.errorString", fmt.Errorf("sync: %w", litequeue.CancelJob(errors.New("account 7 closed")))},
		{"nil", "cancelled by its handler", "*errors.errorString", litequeue.CancelJob(nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			clk := newMock()
			var ev events
			q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy, OnEvent: ev.record})
			runs := 0
			q.Handle("sync", func(ctx context.Context, job *litequeue.Job) error {
				runs++
				clk.Add(time.Second)
				return tt.ret
			})
			j := enqueue(t, q, "sync", nil)
			runDue(t, q)
			got := get(t, q, j.ID)
			if got.State != litequeue.Cancelled || !got.FinishedAt.Equal(epoch.Add(time.Second)) || got.Attempt != 1 {
				t.Errorf("job after the run: %+v, want cancelled at the run's end, attempt 1", got)
			}
			want := []litequeue.Attempt{{
				Attempt: 1, StartedAt: epoch, FinishedAt: epoch.Add(time.Second), Outcome: litequeue.OutcomeCancelled,
				Error: tt.text, ErrorClass: tt.class,
			}}
			h := history(t, q, j.ID)
			if len(h) == 1 {
				want[0].Worker = h[0].Worker
			}
			if diff := cmp.Diff(want, h); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"job.enqueued", "job.started", "job.cancelled"}, ev.types()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			clk.Add(time.Hour)
			runDue(t, q)
			if _, ok, err := q.NextDue(ctx); ok || err != nil || runs != 1 {
				t.Errorf("after an hour: NextDue %v, %v; %d runs; want nothing due, 1 run", ok, err, runs)
			}
			st, err := q.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.RetriesLastHour) != 0 || st.Queues["default"].Cancelled != 1 {
				t.Errorf("Stats: %+v, want no retry and one cancelled job", st)
			}
		})
	}
}

// TestQueue_ErrorClassOfRefusedDial returns what a real refused dial to
// 127.0.0.1 gives: a *net.OpError around an *os.SyscallError around a
// syscall.Errno. The ErrorClass is the innermost one's type, as the
// Attempt doc says.
func TestQueue_ErrorClassOfRefusedDial(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: a dial is refused
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("fetch", func(ctx context.Context, job *litequeue.Job) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err
	})
	j := enqueue(t, q, "fetch", nil)
	runDue(t, q)
	h := history(t, q, j.ID)
	if len(h) != 1 || h[0].Outcome != litequeue.OutcomeFailed {
		t.Skipf("the dial to %s was not refused: %+v", addr, h)
	}
	if got, want := h[0].ErrorClass, "syscall.Errno"; got != want {
		t.Errorf("ErrorClass %q, want %q (error %q)", got, want, h[0].Error)
	}
}
