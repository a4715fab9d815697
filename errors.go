package litequeue

import (
	"errors"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

var (
	// ErrDiscard, returned by a handler (or wrapped in what it returns),
	// ends the job as discarded: not a failure, no retry, no alert. For input
	// that can never succeed, such as a deleted account.
	ErrDiscard = errors.New("litequeue: discard job")

	// ErrNotFound is returned by [Queue.Get], [Queue.History], [Queue.Cancel],
	// [Queue.Replay], [Queue.RunNow] and [Queue.Delete] for an ID that names
	// no job.
	ErrNotFound = errors.New("litequeue: job not found")

	// ErrLeaseLost is returned by [Queue.CompleteTx] when the caller no longer
	// holds the job's lease: it expired and another worker rescued the
	// job, the run timed out, or the job was cancelled. The stale holder's
	// write changes nothing. It is also the cause of a handler's context
	// when a renewal found the lease lost.
	ErrLeaseLost = errors.New("litequeue: lease lost")

	// ErrClosed is returned by every method of a [Queue] after [Queue.Close].
	ErrClosed = errors.New("litequeue: queue closed")

	// ErrReadOnly is returned by every method that writes, on a [Queue]
	// opened with [OpenReadOnly].
	ErrReadOnly = errors.New("litequeue: queue opened read-only")

	// ErrServerGone is returned, wrapped, by a call of a [Queue] on a
	// PostgreSQL server that failed because the server went away: the
	// connection was lost, the server shut down or was starting up, or
	// could not be reached. Such a call is tried again for up to
	// [ServerRetry] first (within its context), so a restart or a failover
	// that short costs no error. Nothing of the call was written, unless
	// the error is also [ErrCommitUnknown].
	ErrServerGone = store.ErrServerGone

	// ErrCommitUnknown is returned, wrapped with [ErrServerGone], by a
	// write whose connection was lost during its COMMIT, when the server
	// could not tell, within [ServerRetry], whether the COMMIT took effect
	// (one that tells it did not is run again). The write may have taken
	// effect or not, and litequeue does not run it again, which could do it
	// twice. An Enqueue with a [UniqueKey] can be repeated safely;
	// otherwise look before doing it again.
	ErrCommitUnknown = store.ErrCommitUnknown

	// ErrNoTables is the cause of the error of [OpenExisting] and
	// [OpenReadOnly] for a file without litequeue's tables (an empty file,
	// the app's own SQLite file), which only [Open] adopts.
	ErrNoTables = store.ErrNoTables

	// ErrNotWritable is the cause of the error of [Open] and
	// [OpenExisting] for a file this process may not write, beside the
	// operating system's ([fs.ErrPermission], EROFS): [OpenReadOnly] can
	// inspect it.
	ErrNotWritable = store.ErrNotWritable
)

// ClockSkewError is the error of a claim, a rescue or a retention sweep
// that a [Queue] on a PostgreSQL server refused because its clock
// ([Options.Clock]), by which it times them, reads further from the
// server's than [Options.MaxClockSkew] allows. [Queue.RunDue] returns it,
// wrapped; [Queue.Work] logs it and claims again once the clock is back
// within the bound. Read it with errors.As.
type ClockSkewError struct {
	Skew  time.Duration // the clock's reading minus the server's: negative when it is behind
	Bound time.Duration // the largest skew allowed, either way
}

func (e *ClockSkewError) Error() string {
	way := "ahead of"
	if e.Skew < 0 {
		way = "behind"
	}
	return fmt.Sprintf("clock skew: the clock reads %v %s the server's, past the bound of %v (Options.MaxClockSkew): "+
		"no job is claimed, rescued or purged until it is back within", e.Skew.Abs(), way, e.Bound)
}

// ServerRetry is how long a call of a [Queue] on a PostgreSQL server that
// found the server away is tried again, from its first failure, before it
// fails with [ErrServerGone]: long enough for a restart or a failover. The
// waits between tries grow from 50ms to 1s, on the real clock whatever
// [Options.Clock] is.
const ServerRetry = store.ServerRetry

// errNilContext is returned by every method that takes a context, given a
// nil one.
var errNilContext = errors.New("litequeue: nil context.Context (pass context.Background() or the caller's context)")

// Permanent wraps err so that the job is not retried: the run is recorded
// as failed and the job goes to dead at once. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// RetryAfter wraps err so that, if tries remain, the next run comes exactly
// d after this one ends, once, without jitter: the dependency said when to
// come back. d is clamped to [0, 24h] and truncated to whole milliseconds.
// The run still counts as a failed try. A nil err is replaced by an error
// saying a retry was asked for.
func RetryAfter(d time.Duration, err error) error {
	if err == nil {
		err = errors.New("retry requested")
	}
	return &retryAfterError{delay: clampDelay(d), err: err}
}

// Snooze asks for the job to run again after d without using a try: the run
// is recorded as snoozed and the next one carries the same [Job.Attempt]
// number. d is clamped to [0, 24h] and truncated to whole milliseconds. A
// job snoozed for 0 is due at once, and [Queue.RunDue] runs it again in the
// same call: a handler that always snoozes for 0 keeps RunDue (and a
// worker) busy with it, a history row a run, until it does something else.
func Snooze(d time.Duration) error {
	return &snoozeError{delay: clampDelay(d)}
}

// CancelJob wraps err so that the run ends the job as cancelled, for good,
// whatever tries remain: the run is recorded as cancelled with err's text
// and class, it is not a failure (no retry, no alert), and job.cancelled
// fires. It is the handler's own [Queue.Cancel], for a job that should no
// longer run (the order was withdrawn while it waited). A nil err is
// replaced by an error saying the handler cancelled the job.
func CancelJob(err error) error {
	if err == nil {
		err = errors.New("cancelled by its handler")
	}
	return &cancelJobError{err}
}

type cancelJobError struct{ err error }

func (e *cancelJobError) Error() string { return e.err.Error() }
func (e *cancelJobError) Unwrap() error { return e.err }

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

type retryAfterError struct {
	delay time.Duration
	err   error
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

type snoozeError struct{ delay time.Duration }

func (e *snoozeError) Error() string { return fmt.Sprintf("snoozed for %v", e.delay) }

// clampDelay bounds a delay a caller gave to [0, CeilingLimit] in whole
// milliseconds.
func clampDelay(d time.Duration) time.Duration {
	return min(max(d, 0), CeilingLimit).Truncate(time.Millisecond)
}

// errorClass names the Go type of the innermost error in err's chain,
// looking through litequeue's own wrappers: "syscall.Errno" for a refused
// dial, whose *net.OpError wraps an *os.SyscallError that wraps the errno.
// A joined error (one that unwraps to several) is its own innermost error.
func errorClass(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return fmt.Sprintf("%T", err)
		}
		err = next
	}
}

// stateError reports an operation refused because of the job's state.
type stateError struct {
	op    string
	id    int64
	state State
	hint  string // what to do instead, if anything
}

func (e *stateError) Error() string {
	msg := fmt.Sprintf("litequeue: %s job %d: it is %s", e.op, e.id, e.state)
	if e.hint != "" {
		msg += " (" + e.hint + ")"
	}
	return msg
}

// jobError wraps err from an operation on job id as "litequeue: <op> job
// <id>: …": a missing row becomes ErrNotFound, and litequeue's own errors
// about the job's state pass as they are.
func jobError(op string, id int64, err error) error {
	var se *stateError
	var ke *keyHeldError
	switch {
	case err == nil, errors.As(err, &se), errors.As(err, &ke):
		return err
	case errors.Is(err, store.ErrNoRows):
		return fmt.Errorf("litequeue: %s job %d: %w", op, id, ErrNotFound)
	}
	return fmt.Errorf("litequeue: %s job %d: %w", op, id, err)
}

// keyHeldError reports a replay refused because a live job holds the dead
// job's unique key: replay never makes two live jobs with one key.
type keyHeldError struct {
	id   int64
	key  string
	live int64
}

func (e *keyHeldError) Error() string {
	return fmt.Sprintf("litequeue: replay job %d: unique key %q is held by live job %d", e.id, e.key, e.live)
}
