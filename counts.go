package litequeue

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/litequeue/litequeue/internal/store"
)

// RecountJobs counts the jobs of every queue, kind and state anew, with
// one scan of the jobs, and where the counts the database keeps beside
// them (which [Queue.Stats] reads) differ, rewrites them all from the
// recount; it returns how many (queue, kind, state) groups differed: 0
// when every count held. It runs in one write transaction that holds the
// other writers off, of every process (on a server it locks the jobs'
// table against writes until it commits), so no change goes uncounted
// between the recount and the rewrite. The counts are kept in the
// transaction of every change that litequeue makes (on a server, by
// triggers, of every change), so a difference means that something
// changed the jobs behind litequeue: on a file, the app's own SQL on
// litequeue_jobs; on a server, a row edited with the triggers off. It returns
// [ErrReadOnly] on a Queue from [OpenReadOnly]. [Queue.Health] reports a
// difference without changing anything; "litequeue check --repair" calls
// RecountJobs.
func (q *Queue) RecountJobs(ctx context.Context) (changed int, err error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	err = q.st.write(ctx, func(tx store.Execer) error {
		diffs, err := store.RepairCounts(ctx, tx, q.st.eng.Serial())
		changed = len(diffs)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("litequeue: recount jobs: %w", err)
	}
	return changed, nil
}

// counts compares, in one snapshot of reads, the kept counts of the jobs
// with a recount, and reports each group that differs as a problem; a
// database that keeps none (uncounted) has nothing to compare.
func (c *rowCount) counts(reads *store.Pool, uncounted bool) {
	if uncounted {
		return
	}
	var diffs []store.CountDiff
	err := reads.Snapshot(c.ctx, func(tx store.Execer) (err error) {
		diffs, err = store.CheckCounts(c.ctx, tx)
		return err
	})
	if err != nil {
		c.problem("recount jobs: %v", err)
		return
	}
	for _, p := range countProblems(diffs) {
		c.problem("%s", p)
	}
}

// countProblems words each difference of diffs, sorted.
func countProblems(diffs []store.CountDiff) []string {
	var out []string
	for _, d := range diffs {
		out = append(out, fmt.Sprintf("the kept count of the %s jobs of kind %q in queue %q is %d, a recount finds %d (litequeue check --repair rewrites the counts)",
			d.State, d.Kind, d.Queue, d.Kept, d.N))
	}
	slices.SortFunc(out, strings.Compare)
	return out
}
