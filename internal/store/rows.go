package store

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// JobColumns lists the columns JobRow scans, for SELECT and RETURNING.
const JobColumns = `id, queue, kind, payload, state, priority, attempt, max_tries,
	own_max_tries, run_at, created_at, finished_at, last_error, unique_key,
	token, lease_until, started_at, worker, retry_delay, cancel, metadata, expires_at`

// JobRow is a row of litequeue_jobs as stored: times in Unix milliseconds.
type JobRow struct {
	ID          int64          `db:"id"`
	Queue       string         `db:"queue"`
	Kind        string         `db:"kind"`
	Payload     []byte         `db:"payload"`
	State       string         `db:"state"`
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
	Metadata    Metadata       `db:"metadata"`
	ExpiresAt   sql.NullInt64  `db:"expires_at"`
}

// AttemptRow is a row of litequeue_attempts as read back.
type AttemptRow struct {
	Attempt    int    `db:"attempt"`
	StartedAt  int64  `db:"started_at"`
	FinishedAt int64  `db:"finished_at"`
	Outcome    string `db:"outcome"`
	Error      string `db:"error"`
	ErrorClass string `db:"error_class"`
	Delay      int64  `db:"delay"`
	Worker     string `db:"worker"`
}

// HistoryRow is a row of litequeue_attempts as written.
type HistoryRow struct {
	AttemptRow
	JobID int64
	Kind  string
	Next  string // the job's state after the run
}

// Metadata is the stored form of a job's metadata: a JSON object in
// litequeue_jobs.metadata, NULL for none.
type Metadata map[string]string

// Value implements driver.Valuer: NULL for no metadata, else the JSON
// object (its keys sorted).
func (m Metadata) Value() (driver.Value, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(map[string]string(m))
	return string(b), err
}

// Scan implements sql.Scanner. A column that is not a JSON object of
// strings (written by the app through DB(), say) fails the read that
// scans it, with the error.
func (m *Metadata) Scan(src any) error {
	var decoded map[string]string
	if err := scanJSON(src, &decoded, "metadata", "a JSON object"); err != nil {
		return err
	}
	if len(decoded) == 0 {
		decoded = nil
	}
	*m = decoded
	return nil
}

// scanJSON decodes into v the JSON text of a column's value src; a NULL
// leaves v as it is. what names the column, and want the JSON it holds,
// for the errors.
func scanJSON(src, v any, what, want string) error {
	var b []byte
	switch s := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(s)
	case []byte:
		b = s
	default:
		return fmt.Errorf("%s column holds %T, want %s as TEXT", what, src, want)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s column: %w", what, err)
	}
	return nil
}

// MS converts a time to the stored Unix milliseconds.
func MS(t time.Time) int64 { return t.UnixMilli() }

// MSUp is MS rounded up to the next whole millisecond, for an end that
// must not come early.
func MSUp(t time.Time) int64 {
	v := t.UnixMilli()
	if FromMS(v).Before(t) {
		v++
	}
	return v
}

// FromMS converts stored Unix milliseconds back to a time.
func FromMS(v int64) time.Time { return time.UnixMilli(v) }

// NullTime converts a nullable stored time; NULL is the zero time.
func NullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return FromMS(v.Int64)
}

// MinNull returns the earlier of two nullable stored times; NULL is no
// time.
func MinNull(a, b sql.NullInt64) sql.NullInt64 {
	if !a.Valid || (b.Valid && b.Int64 < a.Int64) {
		return b
	}
	return a
}

// NullMS is the stored form of a time that may be zero.
func NullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: MS(t), Valid: true}
}

// PayloadColumn is p as the payload column stores it: empty, not NULL,
// for no payload (a driver writes a nil slice as NULL).
func PayloadColumn(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}

// NullString is the stored form of a string that may be empty.
func NullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// AppendJSONArray appends to b a JSON array of n elements, each appended
// by elem: the one argument through which a statement over json_each
// takes the values of many rows.
func AppendJSONArray(b []byte, n int, elem func(b []byte, i int) []byte) []byte {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i)
	}
	return append(b, ']')
}

// FileJobColumns returns the columns of litequeue_jobs that Get and List
// read into a JobRow from a file of the given schema version that is read
// without being migrated (readOnly): JobColumns, but with the columns
// added since that version read as NULL: before version 4 every job has
// no metadata, before version 5 none expires.
func FileJobColumns(version int, readOnly bool) string {
	cols := JobColumns
	if readOnly && version < 4 {
		cols = strings.Replace(cols, "metadata,", "NULL AS metadata,", 1)
	}
	if readOnly && version < 5 {
		cols = strings.Replace(cols, "expires_at", "NULL AS expires_at", 1)
	}
	return cols
}

// ErrNoRows is what a read of one row returns when there is none, on
// every engine.
var ErrNoRows = sql.ErrNoRows
