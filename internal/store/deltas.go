package store

import (
	"context"
	"strings"
)

// The changes that litequeue's own statements make to the kept counts of
// the jobs (counts.go), where the database does not keep them itself: on
// a file, litequeue_jobs has no triggers (a row trigger cost each job's
// insert, claim and end more than the count is worth, and made SQLite
// stage every INSERT … SELECT into it in a temporary table), so each
// operation of this package that inserts or deletes jobs, or changes a
// job's state, queue or kind, adds its changes, in the same transaction,
// from what it knows of the rows it wrote: in a writer batch, to those
// the batch gathers, written in one upsert at its end (Conn.gather); in
// the app's own transaction (EnqueueTx, CompleteTx), in one upsert of
// its own. What other SQL changes behind it goes uncounted: Health reports
// the difference, and RepairCounts mends it. A server's statement
// triggers count every write, whoever makes it (its Dialect says so:
// Dialect.KeepsCounts), and there the operations add nothing.

// Deltas are changes to the kept counts of the jobs, per queue, kind and
// state, gathered by Add and written by Flush in one statement. The zero
// Deltas has none. A Deltas is not safe for concurrent use.
type Deltas struct {
	groups []delta // few, in the order first added: a search beats a map
}

// delta is the change of one group's count.
type delta struct {
	queue, kind, state string
	n                  int
}

// Add adds n (negative: takes away) to the count of the jobs of queue and
// kind in state.
func (d *Deltas) Add(queue, kind, state string, n int) {
	for i := range d.groups {
		if g := &d.groups[i]; g.queue == queue && g.kind == kind && g.state == state {
			g.n += n
			return
		}
	}
	d.groups = append(d.groups, delta{queue, kind, state, n})
}

// Move counts one job of queue and kind that went from state from to
// state to.
func (d *Deltas) Move(queue, kind, from, to string) {
	if from != to {
		d.Add(queue, kind, from, -1)
		d.Add(queue, kind, to, 1)
	}
}

// addCountsSQL adds one group's change to its count; addCountsRow the
// VALUES of each further group of the statement. shard is 0: the file's
// writers take turns, and keep one shard.
const (
	addCountsSQL = `INSERT INTO litequeue_counts AS c (queue, kind, state, shard, n) VALUES (?, ?, ?, 0, ?)`
	addCountsRow = `, (?, ?, ?, 0, ?)`
	addCountsEnd = ` ON CONFLICT (queue, kind, state, shard) DO UPDATE SET n = c.n + excluded.n`
)

// Flush adds the changes gathered to the kept counts in tx, in one
// statement, and empties d; unless tx's database keeps the counts itself
// (then the changes are dropped), or tx is the writer's connection
// gathering its batch's changes (then they join those, see Conn.gather).
func (d *Deltas) Flush(ctx context.Context, tx Execer) error {
	groups := d.groups[:0]
	for _, g := range d.groups {
		if g.n != 0 {
			groups = append(groups, g)
		}
	}
	d.groups = d.groups[:0]
	if len(groups) == 0 || KeepsCounts(tx) {
		return nil
	}
	if c, ok := tx.(*Conn); ok && c.gathering {
		for _, g := range groups {
			c.counts.Add(g.queue, g.kind, g.state, g.n)
		}
		return nil
	}
	args := make([]any, 0, 4*len(groups))
	for _, g := range groups {
		args = append(args, g.queue, g.kind, g.state, g.n)
	}
	_, err := tx.ExecContext(ctx, addCountsSQL+strings.Repeat(addCountsRow, len(groups)-1)+addCountsEnd, args...)
	return err
}

// gather makes the operations of the writer batch that begins on c add
// their changes to the kept counts to c's own Deltas, if on, for
// flushGathered to write in one statement at the batch's end: a batch of
// many enqueues then writes one upsert, not one each. Off (a batch whose
// operations run each in a savepoint, which may roll back), they write
// their own.
func (c *Conn) gather(on bool) {
	c.counts.groups = c.counts.groups[:0]
	c.gathering = on
}

// flushGathered writes the changes that c gathered so far; it gathers on
// as before.
func (c *Conn) flushGathered() error {
	on := c.gathering
	c.gathering = false
	err := c.counts.Flush(context.Background(), c)
	c.gathering = on
	return err
}

// writeGathered writes the changes to the kept counts that the operations
// before it in tx's writer batch gathered (see Conn.gather), for a read
// of the counts in tx that must see them (a repair).
func writeGathered(tx Execer) error {
	if c, ok := tx.(*Conn); ok {
		return c.flushGathered()
	}
	return nil
}

// KeepsCounts reports whether the database that tx runs on keeps the
// counts of its jobs itself, by triggers, as its engine's Dialect says
// (Dialect.KeepsCounts): then litequeue's statements add nothing to them.
// tx is one of this package's (Conn, AppTx, Pool); any other Execer runs
// on a file.
func KeepsCounts(tx Execer) bool {
	t, ok := tx.(interface{ dialect() *Dialect })
	return ok && t.dialect() != nil && t.dialect().KeepsCounts
}

// jobGroup is the queue, kind and state of a job: the group it counts in.
type jobGroup struct {
	Queue string `db:"queue"`
	Kind  string `db:"kind"`
	State string `db:"state"`
}

// countDeleted takes the jobs of groups, just deleted, from the kept
// counts in tx.
func countDeleted(ctx context.Context, tx Execer, groups []jobGroup) error {
	var d Deltas
	for _, g := range groups {
		d.Add(g.Queue, g.Kind, g.State, -1)
	}
	return d.Flush(ctx, tx)
}

// CountInserted adds n jobs of queue and kind, just inserted pending, to
// the kept counts in tx: an engine's InsertJobs where the database does
// not count them itself.
func CountInserted(ctx context.Context, tx Execer, queue, kind string, n int) error {
	var d Deltas
	d.Add(queue, kind, "pending", n)
	return d.Flush(ctx, tx)
}

// CountClaimed moves the jobs of rows, just claimed, from pending to
// running in the kept counts in tx: an engine's Claim where the database
// does not count them itself.
func CountClaimed(ctx context.Context, tx Execer, rows []JobRow) error {
	var d Deltas
	for i := range rows {
		d.Move(rows[i].Queue, rows[i].Kind, "pending", "running")
	}
	return d.Flush(ctx, tx)
}
