package litequeue_test

import (
	"context"
	"net"
	"testing"

	"github.com/litequeue/litequeue"
)

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
