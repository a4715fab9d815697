package store

import (
	"context"
	"strings"
)

// Retention's statements: the janitor finds what to delete with reads that
// take no lock (FinishedJobs, ExpiredKeys), so that with nothing to delete
// it writes nothing, and deletes what it found in transactions of its own
// (DeleteFinished, DeleteExpiredKeys), which check the conditions again.
// How many rows each transaction deletes, and which TTL applies to which
// jobs, the root decides.

// A Scope names jobs by where they run: those of one queue, of one kind,
// or of one kind on one queue ("": any). The zero Scope names every job.
type Scope struct {
	Queue string
	Kind  string
}

// cond is the SQL condition for the jobs s names, with its arguments.
func (s Scope) cond() (string, []any) {
	switch {
	case s.Kind != "" && s.Queue != "":
		return "(queue = ? AND kind = ?)", []any{s.Queue, s.Kind}
	case s.Kind != "":
		return "kind = ?", []any{s.Kind}
	}
	return "queue = ?", []any{s.Queue}
}

// A Class is the jobs of one Scope that none of some others names: those
// one pair of TTLs applies to. The zero Class is every job.
type Class struct {
	cond string // "" for every job
	args []any
}

// ClassOf is the class of the jobs in (the zero Scope: every job) names
// and none of out does.
func ClassOf(in Scope, out ...Scope) Class {
	var parts []string
	var args []any
	if in != (Scope{}) {
		c, a := in.cond()
		parts, args = append(parts, c), append(args, a...)
	}
	for _, s := range out {
		c, a := s.cond()
		parts, args = append(parts, "NOT "+c), append(args, a...)
	}
	return Class{cond: strings.Join(parts, " AND "), args: args}
}

// finishedJobsSQL is followed by the class's condition, if any, and
// purgeLimitSQL.
const finishedJobsSQL = `SELECT id,
	(SELECT COUNT(*) FROM litequeue_attempts a WHERE a.job_id = j.id) AS history
	FROM litequeue_jobs j WHERE state IN (?) AND finished_at <= ?`

const purgeLimitSQL = ` LIMIT ?`

// finishedJobs is the read of FinishedJobs, with its arguments.
func (c Class) finishedJobs(states []string, cutoff int64, limit int) (string, []any) {
	query := finishedJobsSQL
	if c.cond != "" {
		query += " AND " + c.cond
	}
	return query + purgeLimitSQL, append(append([]any{states, cutoff}, c.args...), limit)
}

// A Finished job is one that retention may purge, with how many history
// rows it has.
type Finished struct {
	ID      int64 `db:"id"`
	History int   `db:"history"`
}

// FinishedJobs returns up to limit jobs of class c in one of the states
// that finished at or before cutoff, with the size of their history. It
// takes no lock: on the read pool, it reads without holding up writers.
func FinishedJobs(ctx context.Context, db Execer, c Class, states []string, cutoff int64, limit int) ([]Finished, error) {
	var found []Finished
	query, args := c.finishedJobs(states, cutoff, limit)
	err := selectIn(ctx, db, &found, query, args...)
	return found, err
}

const deleteJobsSQL = `DELETE FROM litequeue_jobs
	WHERE id IN (?) AND state IN (?) AND finished_at <= ? RETURNING id, queue, kind, state, dependents`

// deleteWithJobsSQL delete what is kept of jobs beside their rows: their
// history, outputs, checkpoints and progress, their edges to the jobs
// they depend on and their count of open ones (the edges into them stay
// with the jobs that depend on them, which show that they are gone).
var deleteWithJobsSQL = []string{`DELETE FROM litequeue_attempts WHERE job_id IN (?)`,
	deleteOutputsSQL, deleteCheckpointsSQL, deleteProgressesSQL,
	`DELETE FROM litequeue_deps WHERE job_id IN (?)`, `DELETE FROM litequeue_waits WHERE job_id IN (?)`}

// A deletedJob is a job's row as a DELETE … RETURNING returns it: what
// the kept counts and its dependents need to know.
type deletedJob struct {
	ID int64 `db:"id"`
	jobGroup
	Dependents int `db:"dependents"`
}

// endDeleted finishes, in tx at now, the delete of the jobs whose rows
// were just deleted: it takes them from the kept counts, tells their
// dependents that they will never complete (Resolve), and deletes what
// is kept of them beside their rows (deleteWithJobs).
func endDeleted(ctx context.Context, tx Execer, deleted []deletedJob, now int64) error {
	if len(deleted) == 0 {
		return nil
	}
	gone := make([]int64, len(deleted))
	groups := make([]jobGroup, len(deleted))
	var ended []Ended
	for i, r := range deleted {
		gone[i], groups[i] = r.ID, r.jobGroup
		if r.Dependents > 0 {
			end := Deleted // it will never complete
			if r.State == "completed" {
				end = r.State // an edge still open (after raw SQL) is met
			}
			ended = append(ended, Ended{ID: r.ID, State: end, At: now})
		}
	}
	if err := countDeleted(ctx, tx, groups); err != nil {
		return err
	}
	if _, err := Resolve(ctx, tx, ended); err != nil {
		return err
	}
	return deleteWithJobs(ctx, tx, gone)
}

// deleteWithJobs deletes in tx what is kept of the jobs ids beside their
// rows (deleteWithJobsSQL), when their rows are deleted.
func deleteWithJobs(ctx context.Context, tx Execer, ids []int64) error {
	for _, query := range deleteWithJobsSQL {
		if err := execIn(ctx, tx, query, ids); err != nil {
			return err
		}
	}
	return nil
}

// DeleteFinished deletes in tx, with what is kept of them beside their
// rows (see endDeleted), those of the jobs ids that are still in one of
// the states and finished at or before cutoff (a dead job may have been
// replayed since it was found), and returns how many it deleted. Their
// dependents learn of it at now.
func DeleteFinished(ctx context.Context, tx Execer, ids []int64, states []string, cutoff, now int64) (int, error) {
	var deleted []deletedJob
	if err := selectIn(ctx, tx, &deleted, deleteJobsSQL, ids, states, cutoff); err != nil {
		return 0, err
	}
	return len(deleted), endDeleted(ctx, tx, deleted, now)
}

const expiredKeysSQL = `SELECT key FROM litequeue_keys WHERE expires_at <= ? LIMIT ?`

const deleteKeysSQL = `DELETE FROM litequeue_keys WHERE key IN (?) AND expires_at <= ? RETURNING key`

// ExpiredKeys returns up to limit idempotency keys that have expired at
// now. It takes no lock.
func ExpiredKeys(ctx context.Context, db Execer, now int64, limit int) ([]string, error) {
	return selectAll[string](ctx, db, expiredKeysSQL, now, limit)
}

// DeleteExpiredKeys deletes in tx those of the keys that are still
// expired at now (Mark may have extended one since they were found), and
// returns how many it deleted.
func DeleteExpiredKeys(ctx context.Context, tx Execer, keys []string, now int64) (int, error) {
	var deleted []string
	err := selectIn(ctx, tx, &deleted, deleteKeysSQL, keys, now)
	return len(deleted), err
}
