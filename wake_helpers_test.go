package litequeue_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

// forWatches runs test as two parallel subtests, each on a Queue opened
// with opts and a mock clock of its own: with the file's notifications,
// and without them (a Work that polls, where they do not run), looking on
// its own every poll if poll is above 0; on PostgreSQL only once, as it
// has no file.
func forWatches(t *testing.T, opts litequeue.Options, poll time.Duration, test func(t *testing.T, q *litequeue.Queue, clk *timerClock)) {
	for _, notify := range []bool{true, false} {
		t.Run(fmt.Sprintf("notify=%v", notify), func(t *testing.T) {
			t.Parallel()
			if onPostgres && !notify {
				t.Skip("no file on PostgreSQL")
			}
			clk := newTimerClock()
			opts := opts
			opts.Clock = clk
			q, _ := openQueue(t, opts)
			if !onPostgres {
				litequeue.SetWatch(q, notify, poll)
			}
			test(t, q, clk)
		})
	}
}

// startIdleLoop starts a Work on queues, one of them "two", and returns
// once it has run a job of kind "other" that only it can take, from queue
// "two", taken that run's end, looked again and begun to wait, with no
// run left (see SetSleepHook): idle, with nothing to look for until it is
// told of something. Its queues must differ from those of any other Work
// of q. It returns the function that stops it.
func startIdleLoop(t *testing.T, q *litequeue.Queue, queues ...string) (stop func() error) {
	t.Helper()
	var idle atomic.Bool
	litequeue.SetSleepHook(q, func(qs []string, running int64) {
		if running == 0 && slices.Equal(qs, queues) {
			idle.Store(true)
		}
	})
	q.Handle("other", func(context.Context, *litequeue.Job) error { return nil })
	other := enqueue(t, q, "other", nil, litequeue.OnQueue("two"))
	stop = startWork(t, q, litequeue.WorkerOptions{Queues: queues})
	waitFor(t, "the other kind's job to complete", func() bool { return get(t, q, other.ID).State == litequeue.Completed })
	waitFor(t, "the loop to wait again, idle", idle.Load)
	return stop
}

// takenOnceHeldEnds starts a Work on queue "one", whose run of held waits
// at g, and once held has started, an idle second loop on queue "two" (see
// startIdleLoop), where waiting gives it a job that is due. It checks that
// the job waits while held runs, lets held's run end, and waits for held
// to complete and for the second loop to run the waiting job (ran), which
// only a wake at held's end can bring about while the clock stands still.
func takenOnceHeldEnds(t *testing.T, q *litequeue.Queue, g *gate, held *litequeue.Job, waiting func() *litequeue.Job, ran *atomic.Bool) {
	t.Helper()
	stop1 := startWork(t, q, litequeue.WorkerOptions{Queues: []string{"one"}})
	defer stop1()
	<-g.started
	job := waiting()
	stop2 := startIdleLoop(t, q, "two")
	defer stop2()
	if got := get(t, q, job.ID).State; got != litequeue.Pending || ran.Load() {
		t.Fatalf("the waiting job is %s while the held one runs, want pending", got)
	}
	close(g.release)
	waitFor(t, "the held job to complete", func() bool { return get(t, q, held.ID).State == litequeue.Completed })
	waitFor(t, "the second loop to take the waiting job", ran.Load)
}
