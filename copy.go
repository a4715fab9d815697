package litequeue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue/internal/store"
)

// CopyResult counts what [Copy] copied.
type CopyResult struct {
	Jobs        int // pending and running jobs, copied as pending, and dead ones
	HistoryRows int // of those jobs
	Keys        int // idempotency keys not yet expired
}

// The reads and writes of Copy.
const (
	copyJobsWhere  = ` FROM litequeue_jobs WHERE state IN ('pending', 'running', 'dead') ORDER BY id`
	copyHistorySQL = `SELECT job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state
		FROM litequeue_attempts WHERE job_id IN (SELECT id FROM litequeue_jobs WHERE state IN ('pending', 'running', 'dead'))
		ORDER BY id`
	copyKeysSQL   = `SELECT key, expires_at FROM litequeue_keys WHERE expires_at > ?`
	copyInsertSQL = `INSERT INTO litequeue_jobs
		(queue, kind, payload, state, priority, attempt, max_tries, own_max_tries, run_at, created_at,
		 finished_at, last_error, unique_key, token, metadata, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`
	// copyKeySQL keeps the later expiry of a key in both.
	copyKeySQL = `INSERT INTO litequeue_keys (key, expires_at) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
		WHERE excluded.expires_at > litequeue_keys.expires_at`
)

// copyHistoryRow is a row of copyHistorySQL.
type copyHistoryRow struct {
	JobID int64 `db:"job_id"`
	store.AttemptRow
	Kind string `db:"kind"`
	Next string `db:"next_state"`
}

type copyKeyRow struct {
	Key       string `db:"key"`
	ExpiresAt int64  `db:"expires_at"`
}

// Copy copies into to every job of from that is not finished — pending,
// scheduled, waiting to retry, running — and every dead job, each with its
// history, and the idempotency keys that have not expired: so that an app
// that started on a file moves to a server (package postgres) without
// losing its dead letters, or the reverse. Finished jobs stay behind. It
// reads from in one snapshot and writes into to in one transaction, so it
// copies all or nothing; from is left as it was (a [Queue] from
// [OpenReadOnly] will do).
//
// Stop the app's workers on from first: a running job is copied as
// pending, due when it was, with the tries it has used, and its run in
// progress is not copied. Copied jobs get new IDs in to; their order is
// kept. A job whose unique key a live job in to holds fails the copy, and
// the error names the key; a key in both keeps the later expiry.
func Copy(ctx context.Context, from, to *Queue) (CopyResult, error) {
	var res CopyResult
	if from == to {
		return res, errors.New("litequeue: copy: from and to are one Queue")
	}
	leave, err := from.enter(ctx)
	if err != nil {
		return res, err
	}
	defer leave()
	leaveTo, err := to.enter(ctx)
	if err != nil {
		return res, err
	}
	defer leaveTo()
	if to.st.readOnly() {
		return res, ErrReadOnly
	}
	jobs, history, keys, err := from.copyRead(ctx)
	if err != nil {
		return res, fmt.Errorf("litequeue: copy: read: %w", err)
	}
	err = to.st.write(ctx, func(tx store.Execer) error {
		ids := make(map[int64]int64, len(jobs)) // from's ID → to's
		for i := range jobs {
			id, err := copyJob(ctx, tx, &jobs[i])
			if err != nil {
				return err
			}
			ids[jobs[i].ID] = id
		}
		for i := range history {
			h := &history[i]
			id, ok := ids[h.JobID]
			if !ok {
				return fmt.Errorf("history of job %d, which was not read with the jobs", h.JobID)
			}
			row := &store.HistoryRow{AttemptRow: h.AttemptRow, JobID: id, Kind: h.Kind, Next: h.Next}
			if err := store.AddHistoryRow(ctx, tx, row); err != nil {
				return fmt.Errorf("history of job %d: %w", h.JobID, err)
			}
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, copyKeySQL, k.Key, k.ExpiresAt); err != nil {
				return fmt.Errorf("key %q: %w", k.Key, err)
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("litequeue: copy: %w", err)
	}
	to.wake.fire()
	return CopyResult{Jobs: len(jobs), HistoryRows: len(history), Keys: len(keys)}, nil
}

// copyRead reads what Copy copies, in one snapshot.
func (q *Queue) copyRead(ctx context.Context) ([]store.JobRow, []copyHistoryRow, []copyKeyRow, error) {
	// A file's read transaction (DEFERRED) reads one snapshot; a
	// server's needs REPEATABLE READ for that.
	opts := &sql.TxOptions{ReadOnly: true}
	if q.st.info.Path == "" { // a server: no file
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := q.st.reads.Begin(ctx, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	defer tx.Rollback()
	var jobs []store.JobRow
	var history []copyHistoryRow
	var keys []copyKeyRow
	if err := tx.SelectContext(ctx, &jobs, `SELECT `+q.st.info.JobColumns+copyJobsWhere); err != nil {
		return nil, nil, nil, err
	}
	if err := tx.SelectContext(ctx, &history, copyHistorySQL); err != nil {
		return nil, nil, nil, err
	}
	if err := tx.SelectContext(ctx, &keys, copyKeysSQL, store.MS(q.now())); err != nil {
		return nil, nil, nil, err
	}
	return jobs, history, keys, nil
}

// copyJob inserts the job of row r, a running one as pending, and returns
// its new ID.
func copyJob(ctx context.Context, tx store.Execer, r *store.JobRow) (int64, error) {
	state, runAt := r.State, r.RunAt
	if State(state) == Running {
		state = string(Pending)
		if !runAt.Valid {
			runAt.Int64, runAt.Valid = r.CreatedAt, true
		}
	}
	var id int64
	err := tx.GetContext(ctx, &id, copyInsertSQL, r.Queue, r.Kind, store.PayloadColumn(r.Payload), state, r.Priority, r.Attempt,
		r.MaxTries, r.OwnMaxTries, runAt, r.CreatedAt, r.FinishedAt, r.LastError, r.UniqueKey, r.Token, r.Metadata, r.ExpiresAt)
	if err != nil {
		if r.UniqueKey.Valid {
			return 0, fmt.Errorf("job %d (unique key %q): %w", r.ID, r.UniqueKey.String, err)
		}
		return 0, fmt.Errorf("job %d: %w", r.ID, err)
	}
	return id, nil
}
