package litequeue

import (
	"database/sql"
	"time"
)

// jobColumns lists the columns jobRow scans, for SELECT and RETURNING.
const jobColumns = `id, queue, kind, payload, state, priority, attempt, max_tries,
	own_max_tries, run_at, created_at, finished_at, last_error, unique_key,
	token, lease_until, started_at, worker, retry_delay, cancel, metadata`

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
}

// job returns the public view of the row.
func (r *jobRow) job() *Job {
	return &Job{
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

// nullMS is the stored form of a time that may be zero.
func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: ms(t), Valid: true}
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
