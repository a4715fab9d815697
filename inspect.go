package litequeue

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Get returns the job with the given ID, or ErrNotFound.
func (q *Queue) Get(ctx context.Context, id int64) (*Job, error) {
	leave, err := q.enter()
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
	leave, err := q.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
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
	where, args := f.where()
	query := `SELECT ` + columns + ` FROM litequeue_jobs` + where + ` ORDER BY id`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	return query, args
}

// where returns the filter as a WHERE clause ("" for none) and its
// arguments. The clause is built from fixed column names only; every value
// is a parameter.
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	add("state", string(f.State))
	add("queue", f.Queue)
	add("kind", f.Kind)
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}
