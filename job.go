package litequeue

import (
	"encoding/json"
	"fmt"
	"time"
)

// State is where a job is in its life. The empty State matches every state
// in a Filter.
//
//	          claim                 completed / discarded / cancelled
//	pending ────────► running ───────────────────────────────────────► (terminal)
//	   ▲                 │ failed, tries left (RunAt = end + delay)
//	   ├─────────────────┤ snoozed (no try used), released at shutdown
//	   │                 │ failed on the last try, or Permanent
//	   │ Replay          ▼
//	   └──────────────  dead ──(DeadTTL)──► purged
//
// A pending job whose RunAt lies in the future is scheduled, or waiting to
// retry. A Cancel moves a pending job straight to cancelled.
type State string

// The states of a job.
const (
	Pending   State = "pending"
	Running   State = "running"
	Completed State = "completed"
	Dead      State = "dead"
	Discarded State = "discarded"
	Cancelled State = "cancelled"
)

// terminal reports whether nothing runs a job in state s again on its own.
func (s State) terminal() bool {
	return s == Completed || s == Dead || s == Discarded || s == Cancelled
}

// Job is one unit of work and its current state, as stored.
type Job struct {
	ID         int64 // never given to another job, also once this one is purged or deleted
	Queue      string
	Kind       string
	Payload    []byte // JSON; []byte and json.RawMessage payloads are stored byte for byte, not validated
	State      State
	Priority   int       // higher runs first
	Attempt    int       // 0 before the first run and after a replay, 1 during the first run
	MaxTries   int       // effective: the job's own MaxTries, else its handler's policy
	RunAt      time.Time // when a pending job is due; zero once completed
	CreatedAt  time.Time
	FinishedAt time.Time // zero until terminal
	LastError  string    // the latest failure's error; empty once completed
	UniqueKey  string
	Duplicate  bool              // set by Enqueue when UniqueKey matched an existing job
	Metadata   map[string]string // given at enqueue with [Metadata]; nil for none

	token int64 // the fencing token of the lease the caller holds, if any
}

// Decode unmarshals the job's JSON payload into v.
func (j *Job) Decode(v any) error {
	if err := json.Unmarshal(j.Payload, v); err != nil {
		return fmt.Errorf("decode job %d payload: %w", j.ID, err)
	}
	return nil
}

// Outcome is how one run of a job ended, as recorded in its history.
type Outcome string

// The outcomes of a run, of a replay, and of a RunNow.
const (
	OutcomeCompleted    Outcome = "completed"
	OutcomeFailed       Outcome = "failed"
	OutcomePanicked     Outcome = "panicked"
	OutcomeTimedOut     Outcome = "timed_out"
	OutcomeLeaseExpired Outcome = "lease_expired"
	OutcomeDiscarded    Outcome = "discarded"
	OutcomeCancelled    Outcome = "cancelled"
	OutcomeSnoozed      Outcome = "snoozed"
	OutcomeReplayed     Outcome = "replayed"
	OutcomeRunNow       Outcome = "run_now" // Queue.RunNow made the pending job due at once
)

// Attempt is one row of a job's history: one run, one replay, or one
// RunNow.
type Attempt struct {
	Attempt               int
	StartedAt, FinishedAt time.Time
	Outcome               Outcome
	Error, ErrorClass     string        // ErrorClass: the Go type of the innermost error, e.g. "syscall.Errno" for a refused dial (inside *net.OpError and *os.SyscallError); "timeout" for timed_out, "" for lease_expired
	Delay                 time.Duration // wait chosen after this attempt; 0 if none
	Worker                string
}

// Event reports one committed state change to Options.OnEvent.
type Event struct {
	Type  string        // "job.enqueued", "job.started", "job.completed", "job.retry", …
	Job   Job           // the job as it is after the change
	Err   string        // the error of a failed run, if any
	Delay time.Duration // the wait before a retry or after a snooze
	At    time.Time     // when the change committed, on the injected clock
}
