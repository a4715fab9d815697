package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// A handler's report of how far its run is (Progress), not to be confused
// with WithProgress (progress.go), which reports a long operation's
// progress to its caller.

// progressEvery is how often, at most, a run's reports are written as
// they come; the last one is written at the next lease renewal or at the
// run's end.
const progressEvery = 250 * time.Millisecond

// Progress reports that the run whose handler was given ctx has done done
// of total steps (total 0: not known; a negative value counts as 0). It
// is cheap to call often: the reports are kept in memory and written
// coalesced — at once when none was written in the last 250ms on the
// Queue's clock, and otherwise the latest one at the next lease renewal
// or at the run's end — each write without an fsync and fenced by the
// run's lease, so never one commit per call. [Queue.Get] and
// [Queue.List] read it as [Job.Progress]; it is kept once the run ends,
// until a later run reports its own, and deleted with the job. Outside a
// handler's run it does nothing; a write that fails (the lease lost, the
// Queue closing) is dropped.
func Progress(ctx context.Context, done, total int) {
	r, err := runOf(ctx, "progress")
	if err != nil {
		return
	}
	now := r.clock.Now()
	r.mu.Lock()
	r.progress = &JobProgress{Done: max(done, 0), Total: max(total, 0), At: now}
	due := r.wrote.IsZero() || now.Sub(r.wrote) >= progressEvery
	r.mu.Unlock()
	if due {
		r.flushProgress(ctx)
	}
}

// flushProgress writes the run's latest progress, if it has one not yet
// written. The writes of a run take turns, so that an older report never
// overwrites a newer one.
func (r *runValue) flushProgress(ctx context.Context) {
	if r == nil {
		return
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	p := r.progress
	r.progress = nil
	if p != nil {
		r.wrote = r.clock.Now()
	}
	r.mu.Unlock()
	if p == nil {
		return
	}
	row := store.ProgressRow{Done: int64(p.Done), Total: int64(p.Total), At: store.MS(p.At)}
	_ = r.st.writeLight(ctx, func(tx store.Execer) error {
		_, err := store.SetProgress(ctx, tx, r.claimed, row)
		return err
	})
}

// readProgress fills the Progress of jobs, read on st in one statement
// (see Queue.Get and Queue.List).
func readProgress(ctx context.Context, st *storage, jobs []*Job) error {
	if !st.info.Composed || len(jobs) == 0 {
		return nil // a file read-only, that no binary with progress wrote
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	byID, err := store.JobsProgress(ctx, st.reads, ids)
	if err != nil {
		return fmt.Errorf("read progress: %w", err)
	}
	for _, j := range jobs {
		if p, ok := byID[j.ID]; ok {
			j.Progress = &JobProgress{Done: int(p.Done), Total: int(p.Total), At: store.FromMS(p.At)}
		}
	}
	return nil
}
