package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
)

// A database's ID: a random value in its litequeue_meta, written the first
// time it is opened for writing, by which Copy knows it as a source.

const (
	addDatabaseIDSQL = `INSERT INTO litequeue_meta (name, value) VALUES ('database_id', ?)
		ON CONFLICT (name) DO NOTHING`
	databaseIDSQL = `SELECT value FROM litequeue_meta WHERE name = 'database_id'`
)

// AddDatabaseID gives the database of tx a random ID, unless it has one.
func AddDatabaseID(ctx context.Context, tx Execer) error {
	if _, err := tx.ExecContext(ctx, addDatabaseIDSQL, rand.Text()); err != nil {
		return fmt.Errorf("add the database ID: %w", err)
	}
	return nil
}

// DatabaseID reads the ID of the database of ex; "" if it has none (a
// file last written by an older litequeue).
func DatabaseID(ctx context.Context, ex Execer) (string, error) {
	var id string
	if err := ex.GetContext(ctx, &id, databaseIDSQL); err != nil && !errors.Is(err, ErrNoRows) {
		return "", err
	}
	return id, nil
}

// What Copy moves from one database to another, and the record it keeps
// of what it copied (litequeue_copied), so that it copies each job once.

// A CopySource is what Copy reads of a database, in one snapshot: its ID
// ("" for none), the jobs that are not finished (and the dead), their
// history and checkpoints, the edges of those waiting for their
// dependencies, and the idempotency keys that have not expired.
type CopySource struct {
	ID          string
	Jobs        []JobRow
	History     []CopyHistoryRow
	Checkpoints []CopyCheckpointRow
	Keys        []CopyKeyRow
	Edges       []EdgeRow // of the waiting jobs, by job, then dependency
}

// A CopyCheckpointRow is the checkpoint of a job Copy copies, as stored.
type CopyCheckpointRow struct {
	JobID      int64  `db:"job_id"`
	Checkpoint []byte `db:"checkpoint"`
}

// A CopyHistoryRow is a history row of a job Copy copies.
type CopyHistoryRow struct {
	JobID int64 `db:"job_id"`
	AttemptRow
	Kind string `db:"kind"`
	Next string `db:"next_state"`
}

// A CopyKeyRow is an idempotency key Copy copies.
type CopyKeyRow struct {
	Key       string `db:"key"`
	ExpiresAt int64  `db:"expires_at"`
}

// copiedStates are the states of the jobs Copy copies: those not
// finished, and the dead.
const copiedStates = `('pending', 'running', 'dead', 'waiting')`

const (
	copyJobsWhere  = ` FROM litequeue_jobs WHERE state IN ` + copiedStates + ` ORDER BY id`
	copyHistorySQL = `SELECT job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state
		FROM litequeue_attempts WHERE job_id IN (SELECT id FROM litequeue_jobs WHERE state IN ` + copiedStates + `)
		ORDER BY id`
	copyKeysSQL        = `SELECT key, expires_at FROM litequeue_keys WHERE expires_at > ?`
	copyCheckpointsSQL = `SELECT job_id, checkpoint FROM litequeue_checkpoints
		WHERE job_id IN (SELECT id FROM litequeue_jobs WHERE state IN ` + copiedStates + `)`
	copyEdgesSQL = `SELECT job_id, depends_on, rule, state FROM litequeue_deps
		WHERE job_id IN (SELECT id FROM litequeue_jobs WHERE state = 'waiting') ORDER BY job_id, depends_on`
)

// ReadCopySource reads what Copy copies from the database of p, in one
// snapshot, scanning the jobs' columns cols; the keys are those that have
// not expired at now. The checkpoints are read where the database has
// them (Info.Composed).
func ReadCopySource(ctx context.Context, p *Pool, info Info, now int64) (*CopySource, error) {
	var src *CopySource
	err := p.Snapshot(ctx, func(tx Execer) (err error) {
		src = new(CopySource)
		if src.ID, err = DatabaseID(ctx, tx); err != nil {
			return err
		}
		if err := tx.SelectContext(ctx, &src.Jobs, `SELECT `+info.JobColumns+copyJobsWhere); err != nil {
			return err
		}
		if err := tx.SelectContext(ctx, &src.History, copyHistorySQL); err != nil {
			return err
		}
		if info.Composed {
			if err := tx.SelectContext(ctx, &src.Checkpoints, copyCheckpointsSQL); err != nil {
				return err
			}
		}
		if info.Dependencies {
			if err := tx.SelectContext(ctx, &src.Edges, copyEdgesSQL); err != nil {
				return err
			}
		}
		return tx.SelectContext(ctx, &src.Keys, copyKeysSQL, now)
	})
	return src, err
}

const (
	// copiedFromSQL reads the fingerprints of the jobs copied here from a
	// source, and from any without an ID; copiedAnySQL those from any
	// source, for a source without an ID.
	copiedFromSQL   = `SELECT fingerprint, job_id FROM litequeue_copied WHERE source = ? OR source = ''`
	copiedAnySQL    = `SELECT fingerprint, job_id FROM litequeue_copied`
	copiedInsertSQL = `INSERT INTO litequeue_copied (source, fingerprint, source_id, job_id, copied_at) VALUES (?, ?, ?, ?, ?)`
	copyInsertSQL   = `INSERT INTO litequeue_jobs
		(queue, kind, payload, state, priority, attempt, max_tries, own_max_tries, run_at, created_at,
		 finished_at, last_error, unique_key, token, metadata, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`
	// copyKeySQL keeps the later expiry of a key in both.
	copyKeySQL = `INSERT INTO litequeue_keys (key, expires_at) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
		WHERE excluded.expires_at > litequeue_keys.expires_at`
)

// CopiedBefore returns, in the write transaction tx of the target, the
// fingerprints of the jobs copied into it before from source, with the
// IDs of their copies: from it and, where either database had no ID,
// from any. It refuses a source
// that is the target's own database. The copies into one database take
// turns (see Engine.LockKey) until tx ends, so that each reads what the
// one before recorded.
func CopiedBefore(ctx context.Context, tx Execer, eng Engine, source string) (map[string]int64, error) {
	if err := eng.LockKey(ctx, tx, "copy", ""); err != nil {
		return nil, err
	}
	id, err := DatabaseID(ctx, tx)
	if err != nil {
		return nil, err
	}
	if id != "" && id == source {
		return nil, fmt.Errorf("from and to are one database (database ID %s)", id)
	}
	var fps []struct {
		Fingerprint string `db:"fingerprint"`
		JobID       int64  `db:"job_id"`
	}
	if source == "" {
		err = tx.SelectContext(ctx, &fps, copiedAnySQL)
	} else {
		err = tx.SelectContext(ctx, &fps, copiedFromSQL, source)
	}
	if err != nil {
		return nil, fmt.Errorf("read the jobs copied before: %w", err)
	}
	copied := make(map[string]int64, len(fps))
	for _, fp := range fps {
		copied[fp.Fingerprint] = fp.JobID
	}
	return copied, nil
}

// InsertCopy inserts the job of row r as it is, but for its ID and lease,
// and returns its new ID.
func InsertCopy(ctx context.Context, tx Execer, r *JobRow) (int64, error) {
	var id int64
	err := tx.GetContext(ctx, &id, copyInsertSQL, r.Queue, r.Kind, PayloadColumn(r.Payload), r.State, r.Priority, r.Attempt,
		r.MaxTries, r.OwnMaxTries, r.RunAt, r.CreatedAt, r.FinishedAt, r.LastError, r.UniqueKey, r.Token, r.Metadata, r.ExpiresAt)
	if err != nil {
		return 0, err
	}
	var d Deltas
	d.Add(r.Queue, r.Kind, r.State, 1)
	return id, d.Flush(ctx, tx)
}

// RecordCopy records that the job sourceID of source, whose fingerprint
// is fp, was copied as the job jobID at the given time.
func RecordCopy(ctx context.Context, tx Execer, source, fp string, sourceID, jobID, at int64) error {
	_, err := tx.ExecContext(ctx, copiedInsertSQL, source, fp, sourceID, jobID, at)
	return err
}

// MergeKey adds the idempotency key, or keeps the later of its expiries.
func MergeKey(ctx context.Context, tx Execer, key string, expiresAt int64) error {
	_, err := tx.ExecContext(ctx, copyKeySQL, key, expiresAt)
	return err
}

// CopyCheckpoint writes the checkpoint of the copied job with the given
// ID, as stored in the source.
func CopyCheckpoint(ctx context.Context, tx Execer, id int64, checkpoint []byte) error {
	_, err := tx.ExecContext(ctx, copyCheckpointSQL, id, checkpoint)
	return err
}

const copyCheckpointSQL = `INSERT INTO litequeue_checkpoints (job_id, checkpoint) VALUES (?, ?)`
