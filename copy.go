package litequeue

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// CopyResult counts what [Copy] copied, and what it found copied before.
type CopyResult struct {
	Jobs        int // pending and running jobs, copied as pending, and dead ones
	HistoryRows int // of those jobs
	Keys        int // idempotency keys not yet expired
	Skipped     int // jobs that an earlier Copy from the same database copied: not copied again
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
	// copiedFromSQL reads the fingerprints of the jobs copied here from a
	// source, and from any without an ID; copiedAnySQL those from any
	// source, for a source without an ID. copiedInsertSQL records a copy.
	copiedFromSQL   = `SELECT fingerprint FROM litequeue_copied WHERE source = ? OR source = ''`
	copiedAnySQL    = `SELECT fingerprint FROM litequeue_copied`
	copiedInsertSQL = `INSERT INTO litequeue_copied (source, fingerprint, source_id, job_id, copied_at) VALUES (?, ?, ?, ?, ?)`
	// pgCopyLockSQL makes the copies into one schema of a server take
	// turns, until the commit, so that each reads what the one before
	// recorded: the writers of a file take turns anyway.
	pgCopyLockSQL = `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.litequeue.copy'))`
	databaseIDSQL = `SELECT value FROM litequeue_meta WHERE name = 'database_id'`
)

// copyHistoryRow is a row of copyHistorySQL.
type copyHistoryRow struct {
	JobID int64 `db:"job_id"`
	attemptRow
	Kind string `db:"kind"`
	Next State  `db:"next_state"`
}

type copyKeyRow struct {
	Key       string `db:"key"`
	ExpiresAt int64  `db:"expires_at"`
}

// copySource is what Copy reads of its source, in one snapshot.
type copySource struct {
	id      string // its database ID (addDatabaseID); "": none
	jobs    []jobRow
	history []copyHistoryRow
	keys    []copyKeyRow
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
// Copy copies each job once. to records every job it copied (in its
// table litequeue_copied, kept for good: deleting a row forgets it), and a
// later Copy from the same database skips the job, counting it in
// [CopyResult.Skipped], also after its copy in to finished and was
// purged: a Copy cut short, or run twice, runs no job twice. A database is
// known by a random ID that [Open] (or postgres.Open) writes into it the
// first time, which a copy of the file, a backup, shares; a job by its ID
// there, its creation time, queue, kind and payload. A source without an
// ID (a file last written by an older litequeue, read with
// [OpenReadOnly]) is known by its jobs alone: a job alike in all of these
// that was copied before from any database is skipped. Copy refuses two
// Queues on one database.
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
	if to.readOnly() {
		return res, ErrReadOnly
	}
	src, err := from.copyRead(ctx)
	if err != nil {
		return res, fmt.Errorf("litequeue: copy: read: %w", err)
	}
	err = to.write(ctx, func(tx execer) (err error) {
		res, err = to.copyInto(ctx, tx, src)
		return err
	})
	if err != nil {
		return CopyResult{}, fmt.Errorf("litequeue: copy: %w", err)
	}
	to.notify()
	return res, nil
}

// copyRead reads what Copy copies, in one snapshot.
func (q *Queue) copyRead(ctx context.Context) (*copySource, error) {
	// A file's read transaction (DEFERRED) reads one snapshot; a
	// server's needs REPEATABLE READ for that.
	opts := &sql.TxOptions{ReadOnly: true}
	if q.onServer() {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := q.db.begin(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	src := new(copySource)
	if err := tx.GetContext(ctx, &src.id, databaseIDSQL); err != nil && !errors.Is(err, errNoRows) {
		return nil, err
	}
	if err := tx.SelectContext(ctx, &src.jobs, `SELECT `+q.jobs+copyJobsWhere); err != nil {
		return nil, err
	}
	if err := tx.SelectContext(ctx, &src.history, copyHistorySQL); err != nil {
		return nil, err
	}
	if err := tx.SelectContext(ctx, &src.keys, copyKeysSQL, ms(q.now())); err != nil {
		return nil, err
	}
	return src, nil
}

// copyInto writes src into q in tx: each job that no earlier Copy from
// the same source copied, recorded as copied, with its history, and the
// keys.
func (q *Queue) copyInto(ctx context.Context, tx execer, src *copySource) (CopyResult, error) {
	var res CopyResult
	copied, err := q.copiedBefore(ctx, tx, src.id)
	if err != nil {
		return res, err
	}
	ids, err := copyJobs(ctx, tx, src, copied, ms(q.now()), &res)
	if err != nil {
		return res, err
	}
	for i := range src.history {
		h := &src.history[i]
		id, ok := ids[h.JobID]
		if !ok {
			return res, fmt.Errorf("history of job %d, which was not read with the jobs", h.JobID)
		}
		if id == 0 {
			continue
		}
		row := &historyRow{attemptRow: h.attemptRow, jobID: id, kind: h.Kind, next: h.Next}
		if err := storeHistory(ctx, tx, row); err != nil {
			return res, fmt.Errorf("history of job %d: %w", h.JobID, err)
		}
		res.HistoryRows++
	}
	for _, k := range src.keys {
		if _, err := tx.ExecContext(ctx, copyKeySQL, k.Key, k.ExpiresAt); err != nil {
			return res, fmt.Errorf("key %q: %w", k.Key, err)
		}
	}
	res.Keys = len(src.keys)
	return res, nil
}

// copiedBefore returns the fingerprints of the jobs copied into q before
// from source: from it and, where either database had no ID, from any. It
// refuses a source that is q's own database.
func (q *Queue) copiedBefore(ctx context.Context, tx execer, source string) (map[string]bool, error) {
	if q.onServer() {
		if _, err := tx.ExecContext(ctx, pgCopyLockSQL); err != nil {
			return nil, err
		}
	}
	var id string
	if err := tx.GetContext(ctx, &id, databaseIDSQL); err != nil && !errors.Is(err, errNoRows) {
		return nil, err
	}
	if id != "" && id == source {
		return nil, fmt.Errorf("from and to are one database (database ID %s)", id)
	}
	var fps []string
	var err error
	if source == "" {
		err = tx.SelectContext(ctx, &fps, copiedAnySQL)
	} else {
		err = tx.SelectContext(ctx, &fps, copiedFromSQL, source)
	}
	if err != nil {
		return nil, fmt.Errorf("read the jobs copied before: %w", err)
	}
	copied := make(map[string]bool, len(fps))
	for _, fp := range fps {
		copied[fp] = true
	}
	return copied, nil
}

// copyJobs inserts each job of src whose fingerprint is not in copied,
// and records it as copied at now, counting in res the jobs copied and
// skipped. It returns the IDs in to of the jobs of src, 0 for those
// skipped.
func copyJobs(ctx context.Context, tx execer, src *copySource, copied map[string]bool, now int64, res *CopyResult) (map[int64]int64, error) {
	ids := make(map[int64]int64, len(src.jobs))
	for i := range src.jobs {
		r := &src.jobs[i]
		fp := jobFingerprint(r)
		if copied[fp] {
			ids[r.ID] = 0
			res.Skipped++
			continue
		}
		id, err := copyJob(ctx, tx, r)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, copiedInsertSQL, src.id, fp, r.ID, id, now); err != nil {
			return nil, fmt.Errorf("job %d: record the copy: %w", r.ID, err)
		}
		ids[r.ID] = id
		res.Jobs++
	}
	return ids, nil
}

// jobFingerprint is what Copy knows a job of a source by, besides the
// source's ID: a hash of what made the job, none of which changes while it
// lives — its ID in the source, its creation time, queue, kind and
// payload.
func jobFingerprint(r *jobRow) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d %d %q %q ", r.ID, r.CreatedAt, r.Queue, r.Kind)
	h.Write(r.Payload)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// addDatabaseID gives the database of tx, in its litequeue_meta, the
// random ID that Copy knows it by as a source, unless it has one.
func addDatabaseID(ctx context.Context, tx *sqlx.Tx) error {
	_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO litequeue_meta (name, value) VALUES ('database_id', ?)
		ON CONFLICT (name) DO NOTHING`), rand.Text())
	if err != nil {
		return fmt.Errorf("add the database ID: %w", err)
	}
	return nil
}

// copyJob inserts the job of row r, a running one as pending, and returns
// its new ID.
func copyJob(ctx context.Context, tx execer, r *jobRow) (int64, error) {
	state, runAt := r.State, r.RunAt
	if state == Running {
		state = Pending
		if !runAt.Valid {
			runAt.Int64, runAt.Valid = r.CreatedAt, true
		}
	}
	var id int64
	err := tx.GetContext(ctx, &id, copyInsertSQL, r.Queue, r.Kind, payloadColumn(r.Payload), state, r.Priority, r.Attempt,
		r.MaxTries, r.OwnMaxTries, runAt, r.CreatedAt, r.FinishedAt, r.LastError, r.UniqueKey, r.Token, r.Metadata, r.ExpiresAt)
	if err != nil {
		if r.UniqueKey.Valid {
			return 0, fmt.Errorf("job %d (unique key %q): %w", r.ID, r.UniqueKey.String, err)
		}
		return 0, fmt.Errorf("job %d: %w", r.ID, err)
	}
	return id, nil
}
