package litequeue

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/litequeue/litequeue/internal/store"
)

// CopyResult counts what [Copy] copied, and what it found copied before.
type CopyResult struct {
	Jobs        int // pending and running jobs, copied as pending, waiting and dead ones
	HistoryRows int // of those jobs
	Keys        int // idempotency keys not yet expired
	Skipped     int // jobs that an earlier Copy from the same database copied: not copied again
}

// Copy copies into to every job of from that is not finished — pending,
// scheduled, waiting to retry, running, waiting for its dependencies — and
// every dead job, each with its history and its [Job.Checkpoint], and
// the idempotency keys that have not expired: so that an app
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
// progress is not copied. A job waiting for its dependencies keeps its
// edges to those copied (or copied before), and waits for them in to; its
// edges to jobs that ended in from, and stay behind, are left out, as
// decided there (an open edge to a job no longer in from, deleted by raw
// SQL, is decided as if the job had been deleted). Copied jobs get new IDs in to; their order is
// kept. A job whose unique key a live job in to holds fails the copy, and
// the error names the key; a key in both keeps the later expiry. With a
// ctx of [WithProgress], Copy reports the jobs it has written as it goes.
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
	src, err := store.ReadCopySource(ctx, from.st.reads, from.st.info, store.MS(from.now()))
	if err != nil {
		return res, fmt.Errorf("litequeue: copy: read: %w", err)
	}
	err = to.st.write(ctx, func(tx store.Execer) (err error) {
		res, err = copyInto(ctx, tx, to.st.eng, src, store.MS(to.now()))
		return err
	})
	if err != nil {
		return CopyResult{}, fmt.Errorf("litequeue: copy: %w", err)
	}
	to.wake.fire()
	return res, nil
}

// copyInto writes src in tx at now, the target's transaction on eng: each
// job that no earlier Copy from the same source copied, recorded as
// copied, with its history, checkpoint and dependencies, and the keys.
func copyInto(ctx context.Context, tx store.Execer, eng store.Engine, src *store.CopySource, now int64) (CopyResult, error) {
	var res CopyResult
	copied, err := store.CopiedBefore(ctx, tx, eng, src.ID)
	if err != nil {
		return res, err
	}
	ids, err := copyJobs(ctx, tx, src, copied, now, &res)
	if err != nil {
		return res, err
	}
	for i := range src.History {
		h := &src.History[i]
		id, ok := ids[h.JobID]
		if !ok {
			return res, fmt.Errorf("history of job %d, which was not read with the jobs", h.JobID)
		}
		if id == 0 {
			continue
		}
		row := &store.HistoryRow{AttemptRow: h.AttemptRow, JobID: id, Kind: h.Kind, Next: h.Next}
		if err := store.AddHistoryRow(ctx, tx, row); err != nil {
			return res, fmt.Errorf("history of job %d: %w", h.JobID, err)
		}
		res.HistoryRows++
	}
	if err := copyCheckpoints(ctx, tx, src, ids); err != nil {
		return res, err
	}
	for _, k := range src.Keys {
		if err := store.MergeKey(ctx, tx, k.Key, k.ExpiresAt); err != nil {
			return res, fmt.Errorf("key %q: %w", k.Key, err)
		}
	}
	res.Keys = len(src.Keys)
	return res, nil
}

// copyCheckpoints writes the checkpoints of src's jobs that copyJobs
// copied, under their IDs in to, ids.
func copyCheckpoints(ctx context.Context, tx store.Execer, src *store.CopySource, ids map[int64]int64) error {
	for _, c := range src.Checkpoints {
		if id := ids[c.JobID]; id != 0 {
			if err := store.CopyCheckpoint(ctx, tx, id, c.Checkpoint); err != nil {
				return fmt.Errorf("checkpoint of job %d: %w", c.JobID, err)
			}
		}
	}
	return nil
}

// copyJobs inserts each job of src whose fingerprint is not in copied,
// and records it as copied at now, counting in res the jobs copied and
// skipped; a job waiting for its dependencies gets the edges to those
// that are in to (see copyWaiting). It returns the IDs in to of the jobs
// of src, 0 for those skipped.
func copyJobs(ctx context.Context, tx store.Execer, src *store.CopySource, copied map[string]int64, now int64, res *CopyResult) (map[int64]int64, error) {
	ids := make(map[int64]int64, len(src.Jobs))
	here := make(map[int64]int64, len(src.Jobs)) // the IDs here of the jobs of src, those copied before too
	edges := edgesByJob(src.Edges)
	for i := range src.Jobs {
		r := &src.Jobs[i]
		fp := jobFingerprint(r)
		progress(ctx, i, len(src.Jobs))
		if id, ok := copied[fp]; ok {
			ids[r.ID], here[r.ID] = 0, id
			res.Skipped++
			continue
		}
		c, deps := *r, []store.Dep(nil)
		if State(r.State) == Waiting {
			deps = copyWaiting(&c, edges[r.ID], here, now)
		}
		id, err := copyJob(ctx, tx, &c)
		if err == nil && len(deps) > 0 {
			_, _, err = store.DependCopied(ctx, tx, c.Queue, c.Kind, id, deps, now)
		}
		if err != nil {
			return nil, err
		}
		if err := store.RecordCopy(ctx, tx, src.ID, fp, r.ID, id, now); err != nil {
			return nil, fmt.Errorf("job %d: record the copy: %w", r.ID, err)
		}
		ids[r.ID], here[r.ID] = id, id
		res.Jobs++
	}
	progress(ctx, len(src.Jobs), len(src.Jobs))
	return ids, nil
}

// edgesByJob groups edges by the job that waits.
func edgesByJob(edges []store.EdgeRow) map[int64][]store.EdgeRow {
	by := make(map[int64][]store.EdgeRow)
	for _, e := range edges {
		by[e.Job] = append(by[e.Job], e)
	}
	return by
}

// copyWaiting decides the copy c of a job waiting for its dependencies,
// whose edges in the source are edges, with here the IDs in to of the
// jobs of the source that are there (its dependencies come before it, in
// ID order): it makes c pending, and returns its dependencies there, for
// store.DependCopied to put it in the state they put it in, there and
// then — an edge met in the source stays met, an open one is decided
// by its dependency's state in to, as at an enqueue. An edge to a job
// that is not there is left out; if it was open (a dependency deleted
// by raw SQL), it is decided as if the job were deleted: met, or the
// copy is cancelled at once, with no dependencies.
func copyWaiting(c *store.JobRow, edges []store.EdgeRow, here map[int64]int64, now int64) []store.Dep {
	var deps []store.Dep
	for _, e := range edges {
		on, ok := here[e.On]
		switch {
		case ok && e.State == store.EdgeOpen:
			deps = append(deps, store.Dep{ID: on, Rule: e.Rule})
		case ok:
			deps = append(deps, store.Dep{ID: on, Rule: e.Rule, State: e.State})
		case e.State == store.EdgeOpen && store.EdgeFate(store.Deleted, e.Rule) == store.EdgeFailed:
			c.State, c.FinishedAt = string(Cancelled), sql.NullInt64{Int64: now, Valid: true}
			c.LastError = fmt.Sprintf("dependency %d not copied", e.On)
			return nil
		}
	}
	c.State = string(Pending)
	return deps
}

// jobFingerprint is what Copy knows a job of a source by, besides the
// source's ID: a hash of what made the job, none of which changes while it
// lives — its ID in the source, its creation time, queue, kind and
// payload.
func jobFingerprint(r *store.JobRow) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d %d %q %q ", r.ID, r.CreatedAt, r.Queue, r.Kind)
	h.Write(r.Payload)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// copyJob inserts the job of row r, a running one as pending, due when
// it was, and returns its new ID.
func copyJob(ctx context.Context, tx store.Execer, r *store.JobRow) (int64, error) {
	c := *r
	if State(c.State) == Running {
		c.State = string(Pending)
		if !c.RunAt.Valid {
			c.RunAt.Int64, c.RunAt.Valid = c.CreatedAt, true
		}
	}
	id, err := store.InsertCopy(ctx, tx, &c)
	if err != nil {
		if r.UniqueKey.Valid {
			return 0, fmt.Errorf("job %d (unique key %q): %w", r.ID, r.UniqueKey.String, err)
		}
		return 0, fmt.Errorf("job %d: %w", r.ID, err)
	}
	return id, nil
}
