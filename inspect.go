package litequeue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/litequeue/litequeue/internal/store"
)

// Filter selects jobs for [Queue.List], [Queue.Count] and
// [Queue.ReplayDead]. Zero fields match everything; [Filter.Limit] 0 means
// no limit. Results are ordered by ID, lowest first, or highest first with
// [Filter.Desc].
//
// [Filter.After] and [Filter.Before] bound the IDs, each excluded, so that
// a page of jobs is read from a cursor: the next page of a list ordered by
// Desc is Filter{Before: the last ID shown, Desc: true}, however many jobs
// the file holds. [Filter.ErrorContains] matches the jobs whose LastError
// contains its text; ASCII letters match either case.
//
// A [State] that is none of the constants, a negative Limit, After or
// Before, is an error.
type Filter struct {
	State         State
	Queue         string
	Kind          string
	Limit         int
	After         int64  // only jobs with an ID above After; 0: no bound
	Before        int64  // only jobs with an ID below Before; 0: no bound
	ErrorContains string // only jobs whose LastError contains this text; "": any
	Desc          bool   // highest ID (newest) first
}

// check returns an error naming the field of f that is out of bounds.
func (f Filter) check() error {
	switch f.State {
	case "", Pending, Running, Completed, Dead, Discarded, Cancelled, Expired:
	default:
		return fmt.Errorf("unknown state %q (want pending, running, completed, dead, discarded, cancelled or expired)", f.State)
	}
	switch {
	case f.Limit < 0:
		return fmt.Errorf("limit %d is negative (0: no limit)", f.Limit)
	case f.After < 0:
		return fmt.Errorf("after %d is negative (0: no bound)", f.After)
	case f.Before < 0:
		return fmt.Errorf("before %d is negative (0: no bound)", f.Before)
	}
	return nil
}

// Get returns the job with the given ID, or [ErrNotFound].
func (q *Queue) Get(ctx context.Context, id int64) (*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	var row store.JobRow
	if err := q.st.reads.GetContext(ctx, &row, `SELECT `+q.st.info.JobColumns+` FROM litequeue_jobs WHERE id = ?`, id); err != nil {
		if errors.Is(err, store.ErrNoRows) {
			return nil, fmt.Errorf("litequeue: get job %d: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("litequeue: get job %d: %w", id, err)
	}
	return jobOf(&row), nil
}

// List returns the jobs that match the filter, ordered by ID (highest
// first with f.Desc).
func (q *Queue) List(ctx context.Context, f Filter) ([]*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("litequeue: list jobs: %w", err)
	}
	query, args := f.query(q.st.info.JobColumns, true)
	var rows []store.JobRow
	if err := q.st.reads.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("litequeue: list jobs: %w", err)
	}
	jobs := make([]*Job, len(rows))
	for i := range rows {
		jobs[i] = jobOf(&rows[i])
	}
	return jobs, nil
}

// Count returns how many jobs [Queue.List] would return for the filter:
// those that match it, at most f.Limit of them when it is set. It is the
// number [Queue.ReplayDead] would replay now for a filter of dead jobs.
func (q *Queue) Count(ctx context.Context, f Filter) (int, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := f.check(); err != nil {
		return 0, fmt.Errorf("litequeue: count jobs: %w", err)
	}
	query, args := f.query("id", false)
	var n int
	if err := q.st.reads.GetContext(ctx, &n, `SELECT COUNT(*) FROM (`+query+`) AS matched`, args...); err != nil {
		return 0, fmt.Errorf("litequeue: count jobs: %w", err)
	}
	return n, nil
}

// query returns the SELECT of the given columns of the jobs that match the
// filter, limited, and its arguments; ordered, in the filter's order,
// read through the index that gives it (see stateCond).
func (f Filter) query(columns string, ordered bool) (string, []any) {
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
func stateCond(s State, desc bool) (cond string, args []any, hint string) {
	switch s {
	case Pending:
		if desc {
			return "state = 'pending'", nil, ""
		}
		return "state = 'pending'", nil, " INDEXED BY litequeue_jobs_claim"
	case Running:
		return "state = 'running'", nil, " INDEXED BY litequeue_jobs_lease"
	case Completed:
		return "state = 'completed' AND finished_at IS NOT NULL", nil, " NOT INDEXED"
	case Dead, Discarded, Cancelled, Expired:
		return "state = '" + string(s) + "' AND " + stoppedCond, nil, ""
	}
	return "state = ?", []any{s}, ""
}

// where returns the filter as a WHERE clause ("" for none), its arguments,
// and the hint to SQLite's planner ("" for none; see stateCond). The clause is built
// from fixed column names and the fixed literals of known states; every
// other value is a parameter.
func (f Filter) where() (clause string, args []any, hint string) {
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
		// ILIKE does, its LIKE does not.
		add(`last_error LIKE ? ESCAPE '\'`, "%"+likeEscaper.Replace(f.ErrorContains)+"%")
	}
	if len(conds) == 0 {
		return "", nil, ""
	}
	return " WHERE " + strings.Join(conds, " AND "), args, hint
}

// likeEscaper escapes LIKE's wildcards, so that ErrorContains matches its
// text as written.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
