package litequeue

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
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
type State string

// The states of a job.
const (
	Pending   State = "pending"
	Running   State = "running"
	Completed State = "completed"
	Dead      State = "dead"
	Discarded State = "discarded"
	Cancelled State = "cancelled"
	Expired   State = "expired" // not started by its expiry: see [ExpireAfter]
)

// terminal reports whether nothing runs a job in state s again on its own.
func (s State) terminal() bool {
	return s == Completed || s == Dead || s == Discarded || s == Cancelled || s == Expired
}

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

// failedSQL is true of the history rows of failed runs: what a breaker
// counts, and the runs before a retry. It is also the condition of the
// index litequeue_attempts_breaker, written as ORs (see schema.sql): for
// SQLite to use that index, a query must use this expression, its terms
// in this order.
const failedSQL = `(outcome = 'failed' OR outcome = 'panicked' OR outcome = 'timed_out' OR outcome = 'lease_expired')`

// Attempt is one row of a job's history: one run, one replay, or one
// [Queue.RunNow].
type Attempt struct {
	Attempt               int
	StartedAt, FinishedAt time.Time
	Outcome               Outcome
	Error, ErrorClass     string        // ErrorClass: the Go type of the innermost error, e.g. "syscall.Errno" for a refused dial (inside *net.OpError and *os.SyscallError); "timeout" for timed_out, "" for lease_expired
	Delay                 time.Duration // wait chosen after this attempt; 0 if none
	Worker                string
}

// jobColumns lists the columns jobRow scans, for SELECT and RETURNING.
const jobColumns = `id, queue, kind, payload, state, priority, attempt, max_tries,
	own_max_tries, run_at, created_at, finished_at, last_error, unique_key,
	token, lease_until, started_at, worker, retry_delay, cancel, metadata, expires_at`

// jobRow is a row of litequeue_jobs as stored: times in Unix milliseconds.
type jobRow struct {
	ID          int64          `db:"id"`
	Queue       string         `db:"queue"`
	Kind        string         `db:"kind"`
	Payload     []byte         `db:"payload"`
	State       State          `db:"state"`
	Priority    int            `db:"priority"`
	Attempt     int            `db:"attempt"`
	MaxTries    int            `db:"max_tries"`
	OwnMaxTries int            `db:"own_max_tries"`
	RunAt       sql.NullInt64  `db:"run_at"`
	CreatedAt   int64          `db:"created_at"`
	FinishedAt  sql.NullInt64  `db:"finished_at"`
	LastError   string         `db:"last_error"`
	UniqueKey   sql.NullString `db:"unique_key"`
	Token       int64          `db:"token"`
	LeaseUntil  int64          `db:"lease_until"`
	StartedAt   int64          `db:"started_at"`
	Worker      string         `db:"worker"`
	RetryDelay  int64          `db:"retry_delay"`
	Cancel      bool           `db:"cancel"`
	Metadata    metadataColumn `db:"metadata"`
	ExpiresAt   sql.NullInt64  `db:"expires_at"`
}

// job returns the public view of the row, for a caller to keep.
func (r *jobRow) job() *Job {
	j := r.view()
	return &j
}

// view returns the public view of the row as a value: an [Event]'s Job,
// which costs no allocation of its own.
func (r *jobRow) view() Job {
	return Job{
		ID:         r.ID,
		Queue:      r.Queue,
		Kind:       r.Kind,
		Payload:    r.Payload,
		State:      r.State,
		Priority:   r.Priority,
		Attempt:    r.Attempt,
		MaxTries:   r.MaxTries,
		RunAt:      nullTime(r.RunAt),
		CreatedAt:  fromMS(r.CreatedAt),
		FinishedAt: nullTime(r.FinishedAt),
		LastError:  r.LastError,
		UniqueKey:  r.UniqueKey.String,
		Metadata:   r.Metadata,
		ExpiresAt:  nullTime(r.ExpiresAt),
		token:      r.Token,
	}
}

// ms converts a time to the stored Unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// msUp is ms rounded up to the next whole millisecond, for an end that
// must not come early.
func msUp(t time.Time) int64 {
	v := t.UnixMilli()
	if fromMS(v).Before(t) {
		v++
	}
	return v
}

// fromMS converts stored Unix milliseconds back to a time.
func fromMS(v int64) time.Time { return time.UnixMilli(v) }

// nullTime converts a nullable stored time; NULL is the zero time.
func nullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.Int64)
}

// minNull returns the earlier of two nullable stored times; NULL is no
// time.
func minNull(a, b sql.NullInt64) sql.NullInt64 {
	if !a.Valid || (b.Valid && b.Int64 < a.Int64) {
		return b
	}
	return a
}

// nullMS is the stored form of a time that may be zero.
func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: ms(t), Valid: true}
}

// payloadColumn is p as the payload column stores it: empty, not NULL,
// for no payload (a driver writes a nil slice as NULL).
func payloadColumn(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}

// nullString is the stored form of a string that may be empty.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// appendJSONArray appends to b a JSON array of n elements, each appended by
// elem: the one argument through which a statement over json_each takes
// the values of many rows (see claimUpdateSQL, insertJobsSQL).
func appendJSONArray(b []byte, n int, elem func(b []byte, i int) []byte) []byte {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i)
	}
	return append(b, ']')
}

// fileJobColumns returns the columns of litequeue_jobs that Get and List
// read into a jobRow from a file of the given schema version: jobColumns,
// but for an older file that OpenReadOnly reads without migrating it,
// where the columns added since are missing: before version 4 every job
// has no metadata, before version 5 none expires.
func fileJobColumns(version int, mode openMode) string {
	cols := jobColumns
	if mode == readMode && version < 4 {
		cols = strings.Replace(cols, "metadata,", "NULL AS metadata,", 1)
	}
	if mode == readMode && version < 5 {
		cols = strings.Replace(cols, "expires_at", "NULL AS expires_at", 1)
	}
	return cols
}
