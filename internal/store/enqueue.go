package store

import (
	"context"
	"errors"
)

const liveByKeySQL = `SELECT ` + JobColumns + ` FROM litequeue_jobs
	WHERE unique_key = ? AND state IN ('pending', 'running')`

// LiveByKey reads the live (pending or running) job that holds the unique
// key; nil if none does.
func LiveByKey(ctx context.Context, tx Execer, key string) (*JobRow, error) {
	row := new(JobRow)
	err := tx.GetContext(ctx, row, liveByKeySQL, key)
	if errors.Is(err, ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return row, nil
}
