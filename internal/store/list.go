package store

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// JobFilter selects jobs for ListJobs, CountJobs and JobIDs: the root's
// Filter, checked, with its state as stored. Zero fields match every job;
// Limit 0: no limit.
type JobFilter struct {
	State         string // one of the states, or "" for any
	Queue         string
	Kind          string
	Limit         int
	After         int64  // only IDs above; 0: no bound
	Before        int64  // only IDs below; 0: no bound
	ErrorContains string // only jobs whose last_error contains it, ASCII letters in either case
	UniqueKey     string // only jobs with this unique_key; "": any
	// Metadata selects the jobs whose metadata holds each of its pairs,
	// ASCII letters in either case; nil: any.
	Metadata Metadata
	Desc     bool // highest ID first
}

// ListJobs reads the rows of the jobs that match f on db, in f's order,
// scanning the columns cols (see JobByID).
func ListJobs(ctx context.Context, db Execer, cols string, f JobFilter) ([]JobRow, error) {
	query, args := f.query(cols, true)
	return selectAll[JobRow](ctx, db, query, args...)
}

// JobIDs is ListJobs of the IDs alone.
func JobIDs(ctx context.Context, db Execer, f JobFilter) ([]int64, error) {
	query, args := f.query("id", true)
	return selectAll[int64](ctx, db, query, args...)
}

// CountJobs counts on db the jobs that ListJobs would read for f.
func CountJobs(ctx context.Context, db Execer, f JobFilter) (int, error) {
	query, args := f.query("id", false)
	var n int
	err := db.GetContext(ctx, &n, `SELECT COUNT(*) FROM (`+query+`) AS matched`, args...)
	return n, err
}

// TallyJobs counts on db the jobs that JobIDs would read for f, and
// returns the highest ID among them (0 for none), both from one statement:
// the count and the ID are of the same jobs.
func TallyJobs(ctx context.Context, db Execer, f JobFilter) (jobs int, maxID int64, err error) {
	query, args := f.query("id", f.Limit > 0) // in order, for the first Limit
	return tally(ctx, db, `SELECT COUNT(*) AS jobs, COALESCE(MAX(id), 0) AS max_id FROM (`+query+`) AS counted`, args...)
}

// tally runs query, a count of jobs and their highest ID.
func tally(ctx context.Context, db Execer, query string, args ...any) (int, int64, error) {
	var row struct {
		Jobs  int   `db:"jobs"`
		MaxID int64 `db:"max_id"`
	}
	err := db.GetContext(ctx, &row, query, args...)
	return row.Jobs, row.MaxID, err
}

// query returns the SELECT of the given columns of the jobs that match the
// filter, limited, and its arguments; ordered, in the filter's order,
// read through the index that gives it (see stateCond).
func (f *JobFilter) query(columns string, ordered bool) (string, []any) {
	where, args, hint := f.where()
	if !ordered {
		hint = ""
	}
	query := `SELECT ` + columns + ` FROM litequeue_jobs` + hint + where
	if ordered {
		query += ` ORDER BY id`
		if f.Desc {
			query += ` DESC`
		}
	}
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	return query, args
}

// stoppedCond is litequeue_jobs_stopped's WHERE (schema.sql).
const stoppedCond = "finished_at IS NOT NULL AND state <> 'completed'"

// stateCond is the condition for jobs in state s, and the hint to SQLite's
// planner ("", INDEXED BY or NOT INDEXED) that reads them in ID order. A
// known state is written as a literal so that SQLite may read a partial
// index of that state instead of every row: it cannot for a parameter.
//
// A terminal state also gets the finished_at that only terminal rows
// have. Dead, discarded, cancelled and expired jobs are in
// litequeue_jobs_stopped, an index in ID order, and get its condition
// word for word (stoppedCond), since SQLite uses a partial index only
// for a query whose WHERE has every term of the index's: it picks it,
// as it gives the order without a sort, and a file made before the index
// existed that only OpenReadOnly has opened since has none to name.
// Completed jobs are in no index in ID order (see schema.sql): their list
// reads the table in ID order, where they are most of the rows, and stops
// at its Limit, where litequeue_jobs_finished would sort every completed
// job first. Running jobs are few (a worker's concurrency): their index is
// named and its rows sorted, as SQLite, without statistics, would rather
// scan every row in ID order. Pending jobs may be many: ascending, their
// index is named too, for the order of claims; descending, the list scans
// from the newest row, where pending jobs mostly are, and stops at its
// Limit.
func stateCond(s string, desc bool) (cond string, args []any, hint string) {
	switch s {
	case "pending":
		if desc {
			return "state = 'pending'", nil, ""
		}
		return "state = 'pending'", nil, " INDEXED BY litequeue_jobs_claim"
	case "running":
		return "state = 'running'", nil, " INDEXED BY litequeue_jobs_lease"
	case "completed":
		return "state = 'completed' AND finished_at IS NOT NULL", nil, " NOT INDEXED"
	case "dead", "discarded", "cancelled", "expired":
		return "state = '" + s + "' AND " + stoppedCond, nil, ""
	case "waiting":
		return "state = 'waiting'", nil, " INDEXED BY litequeue_jobs_waiting"
	}
	return "state = ?", []any{s}, ""
}

// where returns the filter as a WHERE clause ("" for none), its arguments,
// and the hint to SQLite's planner ("" for none; see stateCond). The clause is built
// from fixed column names and the fixed literals of known states; every
// other value is a parameter.
func (f *JobFilter) where() (clause string, args []any, hint string) {
	var conds []string
	add := func(cond string, v any) {
		conds = append(conds, cond)
		args = append(args, v)
	}
	if f.State != "" {
		var c string
		c, args, hint = stateCond(f.State, f.Desc)
		conds = append(conds, c)
	}
	if f.Queue != "" {
		add("queue = ?", f.Queue)
	}
	if f.Kind != "" {
		add("kind = ?", f.Kind)
	}
	if f.After > 0 {
		add("id > ?", f.After)
	}
	if f.Before > 0 {
		add("id < ?", f.Before)
	}
	if f.ErrorContains != "" {
		// SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's
		// ILIKE does, its LIKE does not (see Dialect).
		add(`last_error LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(f.ErrorContains)+"%")
	}
	if f.UniqueKey != "" {
		add("unique_key = ?", f.UniqueKey)
	}
	for _, pair := range f.Metadata.pairs() {
		add(`metadata LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(pair)+"%")
	}
	if len(conds) == 0 {
		return "", nil, ""
	}
	return " WHERE " + strings.Join(conds, " AND "), args, hint
}

// likeEscaper escapes LIKE's wildcards, so that ErrorContains matches its
// text as written.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// pairs returns each pair of m as it stands in the stored JSON object
// (see Metadata.Value): "key":"value", both encoded as json.Marshal
// writes a string; in key order.
func (m Metadata) pairs() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key, _ := json.Marshal(k)
		value, _ := json.Marshal(m[k])
		out = append(out, string(key)+":"+string(value))
	}
	return out
}
