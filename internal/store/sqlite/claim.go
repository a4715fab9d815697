package sqlite

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// The claim's reads of due jobs through the claim index (kind, priority
// DESC, run_at, id): of each kind and priority, the due jobs are a range
// of the index, which a claim reads in order up to its limit. Its work is
// bounded by the limit times the kinds and their priorities, whatever the
// number of pending jobs, due or not, of these kinds and others — unless
// it names queues or some are paused: the queue is not in the index, so a
// range steps over the kind's due jobs of the other queues. It leaves
// alone a job whose expiry has come, which the claim's expiry step (see
// expire.go) did not get to. INDEXED BY is SQLite's: without statistics
// its planner may prefer another partial index of pending jobs.

// claimPairsSQL reads the kinds of its JSON array that have pending jobs,
// each with its priorities, highest first: a probe of the index each.
const claimPairsSQL = `WITH RECURSIVE kp(k, p) AS (` + claimPairsCTE + `) SELECT k, p FROM kp WHERE p IS NOT NULL`

const claimPairsCTE = `
	SELECT n.value, (SELECT priority FROM litequeue_jobs INDEXED BY litequeue_jobs_claim
		WHERE state = 'pending' AND kind = n.value ORDER BY priority DESC LIMIT 1) FROM json_each(?) AS n
	UNION ALL
	SELECT kp.k, (SELECT priority FROM litequeue_jobs INDEXED BY litequeue_jobs_claim
		WHERE state = 'pending' AND kind = kp.k AND priority < kp.p ORDER BY priority DESC LIMIT 1)
	FROM kp WHERE kp.p IS NOT NULL`

// claimRangeSQL reads the due jobs of one kind and priority, in order;
// the queue filters go at its end, then claimRangeEnd. A claim reads one
// such range for each pair of claimPairsSQL, the ranges of several pairs
// together under claimOrderSQL: the rows it sorts are those of its
// ranges, at most the limit each.
const claimRangeSQL = `SELECT ` + store.JobColumns + ` FROM litequeue_jobs INDEXED BY litequeue_jobs_claim
	WHERE state = 'pending' AND kind = ? AND priority = ? AND run_at <= ? AND (expires_at IS NULL OR expires_at > ?)`

const (
	claimRangeEnd = ` ORDER BY run_at, id LIMIT ` + store.LimitParam
	claimOrderSQL = ` ORDER BY priority DESC, run_at, id LIMIT ` + store.LimitParam
)

// claimRanges is the most ranges one claim reads in a compound SELECT,
// under SQLite's 500 terms. A claim of more pairs reads them in one
// statement (claimAllSQL), which reads each range again for each of its
// rows (the IN's subquery) and sorts them all.
const claimRanges = 400

// claimAllSQL is the claim of claimPairsSQL's pairs in one statement:
// of each, the range of due jobs up to the limit (the IN's subquery, run
// again for each pair); the queue filters go at its end, then
// claimAllEnd.
const claimAllSQL = `WITH RECURSIVE kp(k, p) AS (` + claimPairsCTE + `)
	SELECT ` + store.JobColumns + ` FROM kp CROSS JOIN litequeue_jobs
	WHERE kp.p IS NOT NULL AND id IN (SELECT id FROM litequeue_jobs INDEXED BY litequeue_jobs_claim
		WHERE state = 'pending' AND kind = kp.k AND priority = kp.p AND run_at <= ?
		  AND (expires_at IS NULL OR expires_at > ?)`

const claimAllEnd = claimRangeEnd + `)` + claimOrderSQL

// A claimPair is a kind with pending jobs of a priority.
type claimPair struct {
	Kind     string `db:"k"`
	Priority int64  `db:"p"`
}

// claimQuery returns the claim's SELECT and its arguments, "" where no
// kind of cq has pending jobs: one range of due jobs per kind and
// priority (claimRangeSQL), and their rows together in claim order, up to
// the limit.
func claimQuery(ctx context.Context, tx store.Execer, cq store.ClaimQuery) (string, []any, error) {
	kinds, err := json.Marshal(cq.Kinds)
	if err != nil {
		return "", nil, err
	}
	var pairs []claimPair
	if err := tx.SelectContext(ctx, &pairs, claimPairsSQL, string(kinds)); err != nil || len(pairs) == 0 {
		return "", nil, err
	}
	now := store.MS(cq.Now)
	filter, fargs := claimFilter(cq)
	if len(pairs) > claimRanges {
		args := append(append([]any{string(kinds), now, now}, fargs...), cq.Limit, cq.Limit)
		return sqlx.In(claimAllSQL+filter+claimAllEnd, args...)
	}
	if len(pairs) == 1 {
		args := append(append([]any{pairs[0].Kind, pairs[0].Priority, now, now}, fargs...), cq.Limit)
		return sqlx.In(claimRangeSQL+filter+claimRangeEnd, args...)
	}
	var b strings.Builder
	var args []any
	for i, p := range pairs {
		if i > 0 {
			b.WriteString(` UNION ALL `)
		}
		b.WriteString(`SELECT * FROM (` + claimRangeSQL + filter + claimRangeEnd + `)`)
		args = append(append(append(args, p.Kind, p.Priority, now, now), fargs...), cq.Limit)
	}
	return sqlx.In(b.String()+claimOrderSQL, append(args, cq.Limit)...)
}

// claimFilter is the condition on queues of a claim, and its arguments.
func claimFilter(cq store.ClaimQuery) (string, []any) {
	var filter string
	var args []any
	if len(cq.Queues) > 0 {
		filter, args = filter+` AND queue IN (?)`, append(args, cq.Queues)
	}
	if len(cq.Paused) > 0 {
		filter, args = filter+` AND queue NOT IN (?)`, append(args, cq.Paused)
	}
	return filter, args
}
