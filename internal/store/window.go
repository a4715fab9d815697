package store

// The history has no index by finished_at (schema.sql, version 6): a
// read of the runs that finished since a moment starts at the first ID of
// its window, found by a binary search over the IDs. Rows are inserted at
// the end of their run with the clock's now, so finished_at rises with
// the ID but for the disorder of several processes' clocks and of
// transactions that commit out of the order they drew their IDs in; the
// search looks for the first row that finished after the moment less
// windowMargin, and the read filters on finished_at from there on, so
// that it counts every row it would count in finished_at order as long as
// no row finished more than windowMargin after one inserted after it. A
// clock set back by more than the margin (a mock clock, a machine's clock
// corrected) may hide rows from such a read until they leave its window.

// windowMargin is how far, in ms, a row's finished_at may be above that
// of a row inserted after it and still be read: five minutes.
const windowMargin = 5 * 60 * 1000

// windowSQL is a WITH clause that defines win(lo, top): lo the first ID
// of the rows from which the history is read for the runs that finished
// after its argument (less windowMargin, already taken), the smallest ID
// at or after which the first row finished after it, found in about
// 2·log2(rows) lookups by ID; top one more than the last ID. A read
// bounds its IDs on both sides, lo and top, which PostgreSQL's planner,
// which knows neither value beforehand, takes for a narrow range of the
// primary key (for one side, a third of the table). Its lo is NULL for an
// empty history. Its one argument is bound twice.
const windowSQL = `WITH RECURSIVE b(lo, hi) AS (
	SELECT (SELECT MIN(id) FROM litequeue_attempts), (SELECT MAX(id) FROM litequeue_attempts) + 1
	UNION ALL
	SELECT CASE WHEN (` + windowProbe + `) THEN lo ELSE (lo + hi) / 2 + 1 END,
	       CASE WHEN (` + windowProbe + `) THEN (lo + hi) / 2 ELSE hi END
	FROM b WHERE lo < hi),
	win(lo, top) AS (SELECT MAX(lo), MAX(hi) FROM b) `

// windowProbe is true where the first row at or after the middle of the
// search's range finished after the search's argument.
const windowProbe = `SELECT finished_at > ? FROM litequeue_attempts WHERE id >= (lo + hi) / 2 ORDER BY id LIMIT 1`

// windowFrom returns the argument of windowSQL for the runs that
// finished after since.
func windowFrom(since int64) int64 { return since - windowMargin }
