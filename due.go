package litequeue

import (
	"context"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Due times: when a worker next has something to do, read cheaply enough
// to poll (see agenda). Work and NextDue read them; RunDue claims what they
// show due.

// NextDue reports the earliest moment [Queue.RunDue] would have work: the
// [Job.RunAt] of a pending job of a kind with a handler on this [Queue], or
// the lease expiry of a running job, whichever is first. ok is false when
// there is neither. The time may lie in the past: the work is due now.
func (q *Queue) NextDue(ctx context.Context) (time.Time, bool, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	defer leave()
	due, err := q.agenda.read(ctx, nil)
	if err != nil {
		return time.Time{}, false, err
	}
	next := store.MinNull(due.pending, due.lease)
	next = store.MinNull(next, q.sched.next())
	return store.NullTime(next), next.Valid, nil
}
