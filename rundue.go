package litequeue

import (
	"context"
	"fmt"
	"time"
)

// RunDue runs, in the caller's goroutine, every job that is due now, one at
// a time in priority, then [Job.RunAt], then ID order, until none is due —
// also retries that become due during the call, as a failure with a delay
// of 0 does. Each handler runs on a goroutine of its own so that its
// timeout can abandon it; RunDue waits for it or for the timeout. It first
// rescues expired leases, re-reads the clock before each claim, claims only
// kinds with a handler on this [Queue], and returns the number of handler
// runs (timed-out runs count; rescues do not). After the runs it enforces
// retention ([Options.DeadTTL], [Options.KeepFinished], expired idempotency
// keys). With a mock clock, a test steps a schedule with [Queue.NextDue],
// clock.Set and RunDue, deterministically.
//
// [Queue.Close] stops RunDue from claiming and shuts its run down as
// [Queue.Work]'s shutdown does, with a grace of [DefaultShutdownGrace] on
// the injected clock: then the handler's context is cancelled, and a job
// whose handler returns is released without using a try; after a further 5s
// a handler that has not returned is abandoned, and its job comes back
// through lease expiry. RunDue then returns its runs and [ErrClosed].
func (q *Queue) RunDue(ctx context.Context) (int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := q.kinds.record(ctx); err != nil {
		return 0, err
	}
	if _, err := q.sched.fire(ctx); err != nil {
		return 0, err
	}
	runs, err := q.run.runDue(ctx)
	if err != nil {
		return runs, err
	}
	if err := q.jan.sweep(ctx); err != nil {
		return runs, fmt.Errorf("litequeue: retention: %w", err)
	}
	return runs, nil
}

// runDue is RunDue's runs. It returns ErrClosed if Close began.
func (rn *runner) runDue(ctx context.Context) (int, error) {
	if _, err := rn.rescue(ctx, nil); err != nil {
		return 0, fmt.Errorf("litequeue: rescue expired leases: %w", err)
	}
	if rn.isClosing() {
		return 0, ErrClosed
	}
	self := &claimer{worker: rn.worker}
	next := func() *claimer {
		if ctx.Err() != nil || rn.isClosing() {
			return nil
		}
		return self
	}
	stopped := func() error {
		if rn.isClosing() {
			return ErrClosed
		}
		return ctx.Err()
	}
	leases, err := rn.claim(ctx, *self, 1)
	if err != nil {
		return 0, fmt.Errorf("litequeue: claim jobs: %w", err)
	}
	if len(leases) == 0 {
		return 0, nil
	}
	st, end := rn.closeSteer()
	defer end()
	st.next = next
	runs := 0
	for l := leases[0]; l != nil; {
		runs++
		if l, err = rn.execute(ctx, l, st); err != nil {
			return runs, err
		}
	}
	return runs, stopped()
}

// closeSteer returns the steer of RunDue's runs, which shuts them down
// once Close begins: it cancels the running handler's context after
// DefaultShutdownGrace on the injected clock, and abandons the run after a
// further wait of the same length (at most maxReleaseWait), as Work's drain
// does. end stops its goroutine and waits for it to return.
func (rn *runner) closeSteer() (st steer, end func()) {
	shutdown, abandon := make(chan struct{}), make(chan struct{})
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-rn.closing:
		case <-done:
			return
		}
		if !rn.wait(DefaultShutdownGrace, done) {
			return
		}
		close(shutdown)
		if rn.wait(min(DefaultShutdownGrace, maxReleaseWait), done) {
			close(abandon)
		}
	}()
	return steer{shutdown: shutdown, abandon: abandon}, func() {
		close(done)
		<-exited
	}
}

// wait waits d on the injected clock and reports true, or false if done
// is closed first.
func (rn *runner) wait(d time.Duration, done <-chan struct{}) bool {
	t := rn.clock.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
