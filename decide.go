package litequeue

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/litequeue/litequeue/internal/store"
)

// What follows a run is decided here, in one pure function: decide takes
// the job's row, how the run ended and the time, and returns the row after,
// the history row and the event. It reads no clock, runs no SQL and starts
// no goroutine, so the holder of a lease and the rescuer of an expired one
// decide alike, and any engine stores the same decision (see
// store.Writer.settle, and storeDecision in store.go).
//
// The policy is applied at claim time (see runner.lease): the claim writes
// into the row the job's effective MaxTries and the wait to apply if this
// run fails (retry_delay), so that a rescuer needs neither the handler nor
// the policy.

// The causes given to a handler's context when it is cancelled.
var (
	errShutdown        = errors.New("litequeue: worker shutting down") // Work's shutdown grace ran out
	errTimedOut        = errors.New("litequeue: handler timed out")    // its timeout passed
	errCancelRequested = errors.New("litequeue: job cancelled")        // Cancel asked the job to stop
)

// panicError carries a recovered panic out of a handler.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v\n\n%s", e.value, e.stack) }

// class is the ErrorClass of the panic: that of an error value, as for a
// returned error, else the Go type of the value.
func (e *panicError) class() string {
	if err, ok := e.value.(error); ok {
		return errorClass(err)
	}
	return fmt.Sprintf("%T", e.value)
}

// endKind is how a run ended.
type endKind int

const (
	endReturned  endKind = iota // the handler returned end.err
	endTimedOut                 // the handler ran past its timeout, end.timeout
	endCancelled                // Cancel asked the job to stop before its handler started
	endReleased                 // Work stopped, or shut down, before the handler started: no try used
	endExpired                  // the lease expired: the rescuer's end of a lost run
)

// An end is how a run ended, as the one who saw it end tells it.
type end struct {
	kind    endKind
	err     error         // endReturned: what the handler returned
	cause   error         // endReturned: why the handler's context was cancelled, if it was
	timeout time.Duration // endTimedOut: the handler's timeout
	started time.Time     // when the run began
	worker  string        // who ran it
	output  []byte        // what the handler recorded (RecordOutput), as stored; nil: none
}

// A decision is what follows a run, or an operator's act on a job: the
// job's row after it, the history row it adds, and the event it fires.
type decision struct {
	after   store.JobRow      // the job's row after, holding no lease
	keep    bool              // the row stays as it is: CompleteTx completed the run already
	history *store.HistoryRow // nil: none
	event   Event             // Type "": none
}

// verdict is what a run's end amounts to, before the job's row says what
// follows: the outcome to record, and the wait it asks for.
type verdict struct {
	outcome   Outcome // "" for a release: no try used, no history
	errText   string
	class     string
	delay     time.Duration // before the next run: a retry's, or a snooze's
	permanent bool          // a failure never retried
}

// failure reports whether a run recorded with outcome o is a failed try.
func failure(o Outcome) bool {
	switch o {
	case OutcomeFailed, OutcomePanicked, OutcomeTimedOut, OutcomeLeaseExpired:
		return true
	}
	return false
}

// judge turns the end of a run of the job in row cur into a verdict. A
// handler that returns after the shutdown grace cancelled its context is
// released, whatever it returned (DESIGN.md, Shutdown): nil too, since a
// handler cut short may return nil without having done its work.
func judge(cur *store.JobRow, e end) verdict {
	retry := time.Duration(cur.RetryDelay) * time.Millisecond
	switch e.kind {
	case endTimedOut:
		return verdict{outcome: OutcomeTimedOut, errText: fmt.Sprintf("timed out after %v", e.timeout), class: "timeout", delay: retry}
	case endCancelled:
		return verdict{outcome: OutcomeCancelled}
	case endReleased:
		return verdict{}
	case endExpired:
		return verdict{outcome: OutcomeLeaseExpired, errText: "lease expired: worker " + cur.Worker + " stopped renewing it", delay: retry}
	}
	switch {
	case errors.Is(e.cause, errCancelRequested):
		return verdict{outcome: OutcomeCancelled, errText: errText(e.err)}
	case errors.Is(e.cause, errShutdown):
		return verdict{}
	}
	return judgeReturned(e.err, retry)
}

// judgeReturned is the verdict on what a handler returned, given the wait
// the claim drew for a failure.
func judgeReturned(err error, retry time.Duration) verdict {
	var (
		pe *panicError
		se *snoozeError
		pm *permanentError
		ra *retryAfterError
	)
	switch {
	case err == nil:
		return verdict{outcome: OutcomeCompleted}
	case errors.As(err, &pe):
		return verdict{outcome: OutcomePanicked, errText: pe.Error(), class: pe.class(), delay: retry}
	case errors.As(err, &se):
		return verdict{outcome: OutcomeSnoozed, delay: se.delay}
	case errors.As(err, new(*cancelJobError)):
		return verdict{outcome: OutcomeCancelled, errText: err.Error(), class: errorClass(err)}
	case errors.Is(err, ErrDiscard):
		return verdict{outcome: OutcomeDiscarded, errText: err.Error(), class: errorClass(err)}
	case unopened(err):
		return verdict{outcome: OutcomeFailed, errText: err.Error(), class: sealedClass, permanent: true}
	case errors.As(err, &pm):
		return verdict{outcome: OutcomeFailed, errText: err.Error(), class: errorClass(err), permanent: true}
	case errors.As(err, &ra):
		return verdict{outcome: OutcomeFailed, errText: err.Error(), class: errorClass(err), delay: ra.delay}
	}
	return verdict{outcome: OutcomeFailed, errText: err.Error(), class: errorClass(err), delay: retry}
}

// MaxErrorText is the most bytes of a run's error text that litequeue
// keeps, in [Job.LastError], [Attempt.Error] and [Event.Err] alike. A
// longer text (a panic's stack, an error that quotes a whole response) is
// cut at a UTF-8 boundary and ends in a mark that gives its full length,
// "…[cut: 2097152 bytes in all]", the whole within the bound.
const MaxErrorText = 16 << 10

// boundText is text cut to MaxErrorText bytes, as every stored error text
// is (see MaxErrorText).
func boundText(text string) string {
	if len(text) <= MaxErrorText {
		return text
	}
	mark := fmt.Sprintf("…[cut: %d bytes in all]", len(text))
	n := MaxErrorText - len(mark)
	for i := 0; i < utf8.UTFMax && !utf8.RuneStart(text[n]); i++ {
		n-- // back to the first byte of the rune cut in two
	}
	return text[:n] + mark
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// decide returns what follows the run of the job in row cur that ended as
// e, at now. cur is the row as claimed while the lease holds, or the row
// as it is now: one that Cancel asked to stop, or, once CompleteTx
// committed the run, a completed one, which stays completed whatever the
// handler returned after (only the history row is added).
func decide(cur *store.JobRow, e end, now time.Time) decision {
	v := judge(cur, e)
	v.errText = boundText(v.errText)
	if State(cur.State) == Completed {
		return decision{
			after:   *cur,
			keep:    true,
			history: historyOf(cur, e, v, OutcomeCompleted, 0, Completed, now),
			event:   Event{Type: eventCompleted, Job: viewOf(cur), At: now},
		}
	}
	a, outcome, delay := route(cur, v, now)
	d := decision{after: a}
	if outcome == "" {
		return d // released: not a run of its own
	}
	d.history = historyOf(cur, e, v, outcome, delay, State(a.State), now)
	d.event = Event{Type: runEvent(State(a.State), outcome), Job: viewOf(&a), At: now, Delay: delay}
	if failure(outcome) {
		d.event.Err = v.errText
	}
	return d
}

// runEvent is the event of a run that left the job in state after, its
// outcome recorded as outcome.
func runEvent(after State, outcome Outcome) string {
	switch after {
	case Pending:
		if outcome == OutcomeSnoozed {
			return eventSnoozed
		}
		return eventRetry
	case Completed:
		return eventCompleted
	case Dead:
		return eventDead
	case Discarded:
		return eventDiscarded
	}
	return eventCancelled
}

// actEvent is the event of an operator's act recorded as outcome: a
// replay or a RunNow.
func actEvent(outcome Outcome) string {
	if outcome == OutcomeReplayed {
		return eventReplayed
	}
	return eventRunNow
}

// route returns where the verdict v on a run of the job in row cur sends
// the job at now: its row after, the outcome to record (a run of a job
// that Cancel asked to stop is cancelled, whatever it returned, even nil),
// and the wait before its next run, if any.
func route(cur *store.JobRow, v verdict, now time.Time) (after store.JobRow, outcome Outcome, delay time.Duration) {
	a := *cur
	a.LeaseUntil, a.Cancel = 0, false
	outcome = v.outcome
	switch {
	case cur.Cancel:
		a.State = string(Cancelled)
		if v.outcome != OutcomeLeaseExpired {
			outcome = OutcomeCancelled
		}
	case v.outcome == OutcomeCompleted:
		a.State, a.RunAt, a.LastError = string(Completed), sql.NullInt64{}, ""
	case v.outcome == OutcomeDiscarded:
		a.State = string(Discarded)
	case v.outcome == OutcomeCancelled:
		a.State = string(Cancelled)
	case v.outcome == OutcomeSnoozed, v.outcome == "":
		a.State, a.Attempt, delay = string(Pending), a.Attempt-1, v.delay
		a.RunAt = store.NullMS(now.Add(delay))
	case v.permanent || cur.Attempt >= cur.MaxTries:
		a.State, a.LastError = string(Dead), v.errText
	default:
		a.State, a.LastError, delay = string(Pending), v.errText, v.delay
		a.RunAt = store.NullMS(now.Add(delay))
	}
	if State(a.State).terminal() {
		a.FinishedAt = store.NullMS(now)
	}
	return a, outcome, delay
}

// historyOf is the history row of the run of the job in row cur that ended
// as e, judged v: recorded with the outcome, the wait chosen after it, and
// the job's state after it.
func historyOf(cur *store.JobRow, e end, v verdict, outcome Outcome, delay time.Duration, next State, now time.Time) *store.HistoryRow {
	return &store.HistoryRow{
		AttemptRow: store.AttemptRow{
			Attempt: cur.Attempt, StartedAt: store.MS(e.started), FinishedAt: store.MS(now), Outcome: string(outcome),
			Error: v.errText, ErrorClass: v.class, Delay: delay.Milliseconds(), Worker: e.worker,
		},
		JobID: cur.ID, Kind: cur.Kind, Next: string(next),
	}
}

// cancelPending is Cancel's decision for a pending job: cancelled at now,
// with no history row.
func cancelPending(cur *store.JobRow, now time.Time) decision {
	a := *cur
	a.State, a.FinishedAt = string(Cancelled), store.NullMS(now)
	return decision{after: a, event: Event{Type: eventCancelled, Job: viewOf(&a), At: now}}
}

// expire is the decision for a pending job not started by its expiry:
// expired at now, never retried nor dead-lettered, with a history row of
// outcome expired (its Attempt the job's, the tries it used) and the
// job.expired event; worker names the Queue that saw it expire. The
// caller has checked that cur is pending and its expires_at has come.
func expire(cur *store.JobRow, worker string, now time.Time) decision {
	a := *cur
	a.State, a.FinishedAt = string(Expired), store.NullMS(now)
	a.LeaseUntil, a.Cancel = 0, false
	h := &store.HistoryRow{
		AttemptRow: store.AttemptRow{Attempt: cur.Attempt, StartedAt: store.MS(now), FinishedAt: store.MS(now), Outcome: string(OutcomeExpired),
			Error: "not started by its expiry at " + store.FromMS(cur.ExpiresAt.Int64).UTC().Format(time.RFC3339Nano), Worker: worker},
		JobID: cur.ID, Kind: cur.Kind, Next: string(Expired),
	}
	return decision{after: a, history: h, event: Event{Type: eventExpired, Job: viewOf(&a), At: now}}
}

// completeHeld is CompleteTx's decision for the job whose lease its caller
// holds: completed at now, with no history row and no event (the worker
// records the run when the handler returns).
func completeHeld(cur *store.JobRow, now time.Time) decision {
	a := *cur
	a.State, a.RunAt, a.LastError, a.FinishedAt = string(Completed), sql.NullInt64{}, "", store.NullMS(now)
	a.LeaseUntil, a.Cancel = 0, false
	return decision{after: a}
}

// makeDue is the decision of an operator's act that puts the job in row
// cur back as pending, due at now, with the given attempt counter: a
// Replay (outcome replayed, Attempt 0) or a RunNow (outcome run_now). The
// act has a history row of its own, by worker.
func makeDue(cur *store.JobRow, outcome Outcome, attempt int, worker string, now time.Time) decision {
	a := *cur
	a.State, a.Attempt, a.RunAt, a.FinishedAt = string(Pending), attempt, store.NullMS(now), sql.NullInt64{}
	a.LeaseUntil, a.Cancel = 0, false
	h := &store.HistoryRow{
		AttemptRow: store.AttemptRow{Attempt: attempt, StartedAt: store.MS(now), FinishedAt: store.MS(now), Outcome: string(outcome), Worker: worker},
		JobID:      cur.ID, Kind: cur.Kind, Next: string(Pending),
	}
	return decision{after: a, history: h, event: Event{Type: actEvent(outcome), Job: viewOf(&a), At: now}}
}
