package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A server that goes away — a restart, a failover — costs a Queue's calls
// no error when it is back within ServerRetry: the writer runs a write
// again (see Writer.Do), and the read pool a read (see Pool.again),
// after waits that grow, within the call's context. The file never goes
// away: its engine reports no error as a lost connection.

// The errors of a call that found the server away and gave up; the root
// package exports them as its own (litequeue.ErrServerGone,
// litequeue.ErrCommitUnknown), with their doc.
var (
	ErrServerGone    = errors.New("litequeue: the server went away")
	ErrCommitUnknown = errors.New("litequeue: the commit's outcome is unknown")
)

// ServerRetry is how long a call on a server that found the server away
// is tried again, from its first failure; the root exports it.
const ServerRetry = 10 * time.Second

// The waits of an outage: the first, and the longest.
const (
	outageFirstWait = 50 * time.Millisecond
	outageMaxWait   = time.Second
)

// An outage paces the tries of one call while the server is away: its
// waits double from outageFirstWait up to outageMaxWait, for ServerRetry
// in all from the first failure. The zero value is an outage that has not
// begun.
type outage struct {
	since time.Time     // the first failure, on the real clock
	next  time.Duration // the next wait
}

// wait waits before the next try of a call that found the server away,
// and reports true; or false, once the call has tried for ServerRetry or
// ctx is done.
func (o *outage) wait(ctx context.Context) bool {
	now := time.Now()
	if o.since.IsZero() {
		o.since, o.next = now, outageFirstWait
	}
	left := ServerRetry - now.Sub(o.since)
	if left <= 0 || ctx.Err() != nil {
		return false
	}
	t := time.NewTimer(min(o.next, left))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	}
	o.next = min(2*o.next, outageMaxWait)
	return true
}

// gone is the error of a call whose last try failed with err, the server
// being away, and that tried no more (see wait).
func (o *outage) gone(ctx context.Context, err error) error {
	return &goneError{err: err, ctx: ctx.Err(), tried: time.Since(o.since), commit: errors.Is(err, ErrCommit)}
}

// goneError is ErrServerGone: a call's last error, from a server that
// went away, and why the call tried no more.
type goneError struct {
	err    error         // the last try's
	ctx    error         // the call's context's error, if it ended the tries
	tried  time.Duration // how long the call was tried again
	commit bool          // the COMMIT failed: ErrCommitUnknown, and not tried again
}

func (e *goneError) Error() string {
	switch {
	case e.commit:
		return fmt.Sprintf("the server went away during COMMIT, which may or may not have taken effect: %v", e.err)
	case e.ctx != nil:
		return fmt.Sprintf("the server went away, and the call's context ended (%v) after %v of tries: %v", e.ctx, e.tried.Round(time.Millisecond), e.err)
	}
	return fmt.Sprintf("the server went away, and was not back after %v of tries: %v", e.tried.Round(time.Millisecond), e.err)
}

func (e *goneError) Is(target error) bool {
	return target == ErrServerGone || e.commit && target == ErrCommitUnknown
}

func (e *goneError) Unwrap() []error {
	if e.ctx != nil {
		return []error{e.ctx, e.err}
	}
	return []error{e.err}
}

// ErrCommit marks a failed COMMIT (see Engine.Commit): whether it took
// effect is unknown when the connection was lost, so the writes are not
// run again, unless the server tells that it did not (see CommitLost).
var ErrCommit = errors.New("commit")

// A CommitLost is ErrCommit for a COMMIT whose connection was lost, of a
// transaction that wrote: the server, once back, tells whether it took
// effect. Every write of the batch holds the same one, which asks once
// for all of them (at a restart, a question each could take more
// connections than the server has).
type CommitLost struct {
	Err error
	// Ask asks the server for the status of the transaction:
	// "committed", "aborted", "in progress", or "" if it no longer knows.
	Ask func(ctx context.Context) (string, error)

	mu     sync.Mutex
	status string // the answer, once it is "committed" or "aborted"
}

func (e *CommitLost) Error() string        { return "commit: " + e.Err.Error() }
func (e *CommitLost) Unwrap() error        { return e.Err }
func (e *CommitLost) Is(target error) bool { return target == ErrCommit }

// outcome returns the status of the transaction, asking the server until
// it has a final one.
func (e *CommitLost) outcome(ctx context.Context) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.status != "" {
		return e.status, nil
	}
	status, err := e.Ask(ctx)
	if status == "committed" || status == "aborted" {
		e.status = status
	}
	return status, err
}

// The causes of two refusals of a database, which a tool may say in its
// own words; the root package exports them as its own
// (litequeue.ErrNoTables, litequeue.ErrNotWritable), with their doc.
var (
	ErrNoTables    = errors.New("the file has no litequeue tables")
	ErrNotWritable = errors.New("the file is not writable")
)
