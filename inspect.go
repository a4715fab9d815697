package litequeue

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Get returns the job with the given ID, or ErrNotFound.
func (q *Queue) Get(ctx context.Context, id int64) (*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	var row jobRow
	if err := q.db.GetContext(ctx, &row, jobByIDSQL, id); err != nil {
		if errors.Is(err, errNoRows) {
			return nil, fmt.Errorf("litequeue: get job %d: %w", id, ErrNotFound)
		}
		return nil, fmt.Errorf("litequeue: get job %d: %w", id, err)
	}
	return row.job(), nil
}

// List returns the jobs that match the filter, ordered by ID.
func (q *Queue) List(ctx context.Context, f Filter) ([]*Job, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("litequeue: list jobs: %w", err)
	}
	query, args := f.query(jobColumns)
	var rows []jobRow
	if err := q.db.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, fmt.Errorf("litequeue: list jobs: %w", err)
	}
	jobs := make([]*Job, len(rows))
	for i := range rows {
		jobs[i] = rows[i].job()
	}
	return jobs, nil
}

// query returns the SELECT of the given columns of the jobs that match the
// filter, ordered by ID and limited, and its arguments.
func (f Filter) query(columns string) (string, []any) {
	where, args, index := f.where()
	from := `litequeue_jobs`
	if index != "" {
		from += ` INDEXED BY ` + index
	}
	query := `SELECT ` + columns + ` FROM ` + from + where + ` ORDER BY id`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	return query, args
}

// stateCond is the condition for jobs in state s, and the index that holds
// them. A known state is written as a literal, with the finished_at that
// only terminal states have, so that SQLite may read the partial index of
// that state (claim, lease or finished) instead of every row: it cannot
// for a parameter, and without statistics it prefers a scan in ID order
// to an index it would have to sort, so the index is named.
func stateCond(s State) (cond string, args []any, index string) {
	switch s {
	case Pending:
		return "state = 'pending'", nil, "litequeue_jobs_claim"
	case Running:
		return "state = 'running'", nil, "litequeue_jobs_lease"
	case Completed, Dead, Discarded, Cancelled:
		return "state = '" + string(s) + "' AND finished_at IS NOT NULL", nil, "litequeue_jobs_finished"
	}
	return "state = ?", []any{s}, ""
}

// where returns the filter as a WHERE clause ("" for none), its arguments,
// and the index that holds the filter's state ("" for none; see
// stateCond). The clause is built from fixed column names and the fixed
// literals of known states; every other value is a parameter.
func (f Filter) where() (clause string, args []any, index string) {
	var conds []string
	add := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	if f.State != "" {
		var c string
		c, args, index = stateCond(f.State)
		conds = append(conds, c)
	}
	add("queue", f.Queue)
	add("kind", f.Kind)
	if len(conds) == 0 {
		return "", nil, ""
	}
	return " WHERE " + strings.Join(conds, " AND "), args, index
}
