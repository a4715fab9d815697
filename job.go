package litequeue

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// State is where a job is in its life. The empty State matches every state
// in a [Filter].
//
//	          claim                 completed / discarded / cancelled
//	pending ────────► running ───────────────────────────────────────► (terminal)
//	   ▲                 │ failed, tries left (RunAt = end + delay)
//	   ├─────────────────┤ snoozed (no try used), released at shutdown
//	   │                 │ failed on the last try, or Permanent
//	   │ Replay          ▼
//	   └──────────────  dead ──(DeadTTL)──► purged
//
// A pending job whose [Job.RunAt] lies in the future is scheduled, or
// waiting to retry. A [Queue.Cancel] moves a pending job straight to
// cancelled, and a pending job not started by its expiry (see
// [ExpireAfter]) becomes expired.
//
// A job enqueued with [DependsOn] starts waiting, never claimed, until
// its dependencies have completed:
//
//	waiting ──the last dependency completes──► pending
//	waiting ──a dependency fails or is deleted (see DependencyRule), or Cancel──► cancelled
type State string

// The states of a job.
const (
	Pending   State = "pending"
	Waiting   State = "waiting" // for its dependencies to complete: see [DependsOn]
	Running   State = "running"
	Completed State = "completed"
	Dead      State = "dead"
	Discarded State = "discarded"
	Cancelled State = "cancelled"
	Expired   State = "expired" // not started by its expiry: see [ExpireAfter]
)

// terminal reports whether nothing runs a job in state s again on its own.
func (s State) terminal() bool { return store.Terminal(string(s)) }

// Job is one unit of work and its current state, as stored.
type Job struct {
	ID         int64 // never given to another job, also once this one is purged or deleted
	Queue      string
	Kind       string
	Payload    []byte // JSON; []byte and [json.RawMessage] payloads are stored byte for byte, not validated
	State      State
	Priority   int       // higher runs first
	Attempt    int       // 0 before the first run and after a replay, 1 during the first run
	MaxTries   int       // effective: the job's own MaxTries, else its handler's policy
	RunAt      time.Time // when a pending job is due; zero once completed
	CreatedAt  time.Time
	FinishedAt time.Time // zero until terminal
	LastError  string    // the latest failure's error, at most [MaxErrorText] bytes; empty once completed
	UniqueKey  string
	Duplicate  bool              // set by [Queue.Enqueue] when [UniqueKey] matched an existing job
	Metadata   map[string]string // given at enqueue with [Metadata]; nil for none
	ExpiresAt  time.Time         // not started by then, the job expires (see [ExpireAfter]); zero: never
	// Output is what the handler of the run that completed the job
	// recorded with [RecordOutput], opened if sealed; nil: none. Only
	// [Queue.Get] reads it: List, events and a handler's job leave it nil.
	Output []byte
	// Checkpoint is what a handler of the job last saved with
	// [Checkpoint], opened if sealed; nil: none. A handler's job carries
	// it, read at the claim, to resume from, and so does [Queue.Get]; List
	// and events leave it nil.
	Checkpoint []byte
	// Progress is how far a run of the job said it was, with [Progress]:
	// the latest run's that reported one, kept once it ends. nil: none.
	// [Queue.Get] and [Queue.List] read it; a handler's job and events
	// leave it nil.
	Progress *JobProgress

	token  int64      // the fencing token of the lease the caller holds, if any
	opened *openedJob // nil unless Payload was sealed and is opened (see Sealed)
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

// The outcomes of a run, of a replay, of a [Queue.RunNow], and of an expiry.
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
	OutcomeRunNow       Outcome = "run_now" // [Queue.RunNow] made the pending job due at once
	OutcomeExpired      Outcome = "expired" // the pending job was not started by its expiry
)

// Attempt is one row of a job's history: one run, one replay, or one
// [Queue.RunNow].
type Attempt struct {
	Attempt               int
	StartedAt, FinishedAt time.Time
	Outcome               Outcome
	Error, ErrorClass     string        // ErrorClass: the Go type of the innermost error, e.g. "syscall.Errno" for a refused dial (inside *net.OpError and *os.SyscallError); "timeout" for timed_out, "sealed" for a sealed payload that did not open (see [Options.SealKeys]), "" for lease_expired
	Delay                 time.Duration // wait chosen after this attempt; 0 if none
	Worker                string
}

// jobOf returns the public view of the row r, for a caller to keep.
func jobOf(r *store.JobRow) *Job {
	j := viewOf(r)
	return &j
}

// viewOf returns the public view of the row r as a value: an [Event]'s
// Job, which costs no allocation of its own.
func viewOf(r *store.JobRow) Job {
	return Job{
		ID:         r.ID,
		Queue:      r.Queue,
		Kind:       r.Kind,
		Payload:    r.Payload,
		State:      State(r.State),
		Priority:   r.Priority,
		Attempt:    r.Attempt,
		MaxTries:   r.MaxTries,
		RunAt:      store.NullTime(r.RunAt),
		CreatedAt:  store.FromMS(r.CreatedAt),
		FinishedAt: store.NullTime(r.FinishedAt),
		LastError:  r.LastError,
		UniqueKey:  r.UniqueKey.String,
		Metadata:   r.Metadata,
		ExpiresAt:  store.NullTime(r.ExpiresAt),
		token:      r.Token,
	}
}

// JobProgress is how far a job's handler said its run was, with
// [Progress]: Done of Total (0: not known), reported At.
type JobProgress struct {
	Done, Total int
	At          time.Time
}

// String returns the progress as "3 of 10 (30%)", or "3" when the total
// is not known.
func (p JobProgress) String() string {
	if p.Total <= 0 {
		return fmt.Sprint(p.Done)
	}
	return fmt.Sprintf("%d of %d (%d%%)", p.Done, p.Total, p.Done*100/p.Total)
}
