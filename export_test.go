package litequeue

import (
	"context"
	"testing"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// SetWatch sets how the Work calls that q starts from now on learn of
// other processes' writes: with the file system's notifications or
// without, and, if poll is above 0, how often they look on their own.
// For tests of the file's wake-ups only; it panics on another backend.
func SetWatch(q *Queue, notify bool, poll time.Duration) {
	q.st.eng.(interface{ SetWatch(bool, time.Duration) }).SetWatch(notify, poll)
}

// RescueLook runs a Work loop's first look through the expired leases,
// which rescues none of them (each is only seen, see sightings), in one
// write transaction of q, and calls during while the transaction is
// open. It returns how many leases the look rescued.
func RescueLook(ctx context.Context, q *Queue, during func()) (int, error) {
	var seen sightings
	seen.begin()
	defer seen.end()
	n := 0
	err := q.st.write(ctx, func(tx store.Execer) error {
		events, _, _, err := q.res.rescueSome(ctx, tx, &seen, nil, nil)
		if err != nil {
			return err
		}
		n = len(events)
		during()
		return nil
	})
	return n, err
}

// SetSleepHook has each Work loop of q call h as it begins to wait with
// room for a job, with its WorkerOptions.Queues and how many of its runs
// have not yet ended, as far as it knows: once it has taken a run's end
// and looked again, that count no longer holds the run. For tests that
// must know that a loop is idle.
func SetSleepHook(q *Queue, h func(queues []string, running int64)) { q.run.sleepHook.Store(&h) }

// WaitWithin is waitWithin (helpers_internal_test.go), for the helpers of
// the tests of package litequeue_test.
func WaitWithin(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	waitWithin(tb, d, what, cond)
}
