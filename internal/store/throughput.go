package store

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Throughput: litequeue_throughput counts the ends of runs and jobs per
// minute and outcome, so that the figures of the last hour and day read a
// few rows of it instead of every history row. An end is counted in the
// transaction that stores it (the settle of a batch of run ends, a
// rescue, an expiry, a cancel), so an end rolled back, or one whose fence
// did not hold, counts nothing. Each writer adds to rows of its own shard:
// on a server, two processes' settles then do not wait on one row's lock
// until they commit; a reader adds the shards up.

// The outcomes litequeue_throughput counts.
const (
	EndCompleted = "completed" // a run completed
	EndRetried   = "retried"   // a failed run, after which the job waits to run again
	EndDead      = "dead"      // the job went dead
	EndDiscarded = "discarded" // a run discarded its job
	EndCancelled = "cancelled" // the job was cancelled, running or not
	EndExpired   = "expired"   // the job expired before it started
)

// ShardFor returns the shard of litequeue_throughput for a new writer on
// eng: 0 where the writers take turns anyway (a file), else one of its
// own, drawn at random from 1 to 2³¹−1, so that no two processes' writers
// add to the same rows (unless two drew the same number). A writer's
// transactions take turns on its one connection, so they never wait on
// another's row lock until its commit, and never deadlock on one: their
// counts of a settle and a claim's expiries lock rows in no set order
// across statements, and a shard shared by two processes would let two
// transactions lock the same two rows in opposite orders. A minute has a
// row per writer that counted in it, which the janitor deletes after 25
// hours with the others.
func ShardFor(eng Engine) int {
	if eng.Serial() {
		return 0
	}
	return 1 + rand.IntN(math.MaxInt32-1)
}

// EndOf returns what litequeue_throughput counts for the run or act that
// the history row h records: the job's state after it, "retried" for a
// failed run after which the job is pending again, and "" for none (a
// snooze, a replay, a run now).
func EndOf(h *HistoryRow) string {
	switch h.Next {
	case EndCompleted, EndDead, EndDiscarded, EndCancelled, EndExpired:
		return h.Next
	case "pending":
		if Failed(h.Outcome) {
			return EndRetried
		}
	}
	return ""
}

// An endTally is the ends to add to litequeue_throughput, per minute and
// outcome.
type endTally []endCount

type endCount struct {
	minute  int64 // ms: the start of the minute
	outcome string
	n       int
}

// add counts n ends of outcome at the moment at (ms).
func (t *endTally) add(at int64, outcome string, n int) {
	minute := at - at%minuteMS
	for i := range *t {
		if c := &(*t)[i]; c.minute == minute && c.outcome == outcome {
			c.n += n
			return
		}
	}
	*t = append(*t, endCount{minute, outcome, n})
}

const minuteMS = 60_000

// countSQL adds to one row of litequeue_throughput, or makes it;
// countValues is a row's place in VALUES.
const (
	countSQL = `INSERT INTO litequeue_throughput (minute, outcome, shard, n) VALUES ` + countValues + `
	ON CONFLICT (minute, outcome, shard) DO UPDATE SET n = litequeue_throughput.n + excluded.n`
	countValues = `(?, ?, ?, ?)`
)

// store adds the endTally to the rows of shard in tx, in one statement. Its
// rows go in one order, by minute and outcome, so that two transactions
// of one shard wait for each other rather than deadlock.
func (t endTally) store(ctx context.Context, tx Execer, shard int) error {
	if len(t) == 0 {
		return nil
	}
	slices.SortFunc(t, func(a, b endCount) int {
		return cmp.Or(cmp.Compare(a.minute, b.minute), cmp.Compare(a.outcome, b.outcome))
	})
	query := countSQL
	if len(t) > 1 {
		query = strings.Replace(countSQL, countValues, countValues+strings.Repeat(", "+countValues, len(t)-1), 1)
	}
	args := make([]any, 0, 4*len(t))
	for _, c := range t {
		args = append(args, c.minute, c.outcome, shard, c.n)
	}
	_, err := tx.ExecContext(ctx, query, args...)
	return err
}

// CountEnds adds to litequeue_throughput, in tx and in shard, the ends
// that the history rows record (see EndOf), each in the minute of its
// FinishedAt: one statement for them all, none if none counts. A nil row
// counts nothing.
func CountEnds(ctx context.Context, tx Execer, shard int, rows []*HistoryRow) error {
	var t endTally
	for _, h := range rows {
		if h == nil {
			continue
		}
		if end := EndOf(h); end != "" {
			t.add(h.FinishedAt, end, 1)
		}
	}
	return t.store(ctx, tx, shard)
}

// CountEnd adds to litequeue_throughput, in tx and in shard, n ends of
// outcome at the moment at (ms), for ends that leave no history row (a
// cancel of a job that was not running).
func CountEnd(ctx context.Context, tx Execer, shard int, at int64, outcome string, n int) error {
	if n == 0 {
		return nil
	}
	t := endTally{}
	t.add(at, outcome, n)
	return t.store(ctx, tx, shard)
}

// throughputSQL adds up the shards' rows of each outcome per span of
// step ms (spans aligned on Unix time), from from to before to.
const throughputSQL = `SELECT (minute / ?) * ? AS span_start, outcome, CAST(SUM(n) AS BIGINT) AS n
	FROM litequeue_throughput WHERE minute >= ? AND minute < ?
	GROUP BY span_start, outcome ORDER BY span_start, outcome`

// A ThroughputRow counts the ends of one outcome in one span of time.
type ThroughputRow struct {
	Start   int64  `db:"span_start"` // ms: the start of the span
	Outcome string `db:"outcome"`
	N       int    `db:"n"`
}

// Throughput reads on db the ends counted in the minutes from from to
// before to (ms), per span of step ms (a whole number of minutes) and
// outcome, oldest first; spans and outcomes without an end are left out.
// It reads the rows of those minutes alone, through the table's primary
// key.
func Throughput(ctx context.Context, db Execer, from, to, step int64) ([]ThroughputRow, error) {
	return selectAll[ThroughputRow](ctx, db, throughputSQL, step, step, from, to)
}

// oldThroughputSQL finds the limit-th oldest minute counted before a
// cutoff, or the newest if there are fewer, through the primary key.
const oldThroughputSQL = `SELECT MAX(minute) FROM (SELECT DISTINCT minute FROM litequeue_throughput
	WHERE minute < ? ORDER BY minute LIMIT ?) AS old`

const deleteThroughputSQL = `DELETE FROM litequeue_throughput WHERE minute <= ?`

// OldThroughput returns the newest of the limit oldest minutes counted
// before cutoff (ms), for DeleteThroughput, and false if none is. It
// takes no lock.
func OldThroughput(ctx context.Context, db Execer, cutoff int64, limit int) (int64, bool, error) {
	var last sql.NullInt64
	err := db.GetContext(ctx, &last, oldThroughputSQL, cutoff, limit)
	return last.Int64, last.Valid, err
}

// DeleteThroughput deletes in tx the counts of the minutes up to and
// including through (ms), and returns how many rows it deleted.
func DeleteThroughput(ctx context.Context, tx Execer, through int64) (int, error) {
	res, err := tx.ExecContext(ctx, deleteThroughputSQL, through)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
