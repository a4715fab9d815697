package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Dependencies between jobs. A job enqueued with dependencies holds an
// edge to each in litequeue_deps, and, while any edge is open, is in
// state 'waiting' with a row in litequeue_waits that counts its open
// edges. litequeue_jobs.dependents counts the edges into a job, so that
// the end of a job without dependents (nearly every one) looks for none.
//
// The state machine of an edge, decided by EdgeFate:
//
//	open ──dependency completes───────────────────────────────────▶ met
//	open ──dependency fails (or is deleted), rule run─────────────▶ met
//	open ──dependency goes dead, rule wait────────────────────────▶ open   (a replay may yet complete it)
//	open ──dependency fails otherwise (or is deleted), rule wait──▶ failed (the job is cancelled)
//	open ──dependency fails (or is deleted), rule cancel──────────▶ failed (the job is cancelled)
//
// A dependency fails when it goes dead, is discarded, cancelled or
// expires: of those, only a dead job can be replayed, so only a dead one
// keeps an edge of rule wait open.
//
// The state machine of the waiting job: waiting ──its last open edge
// met──▶ pending (due at its RunAt, or at once if that has passed);
// waiting ──an edge failed, or Cancel──▶ cancelled, which, if it has
// dependents, is resolved in turn. A job that stops waiting so drops its
// edges still open (open ──▶ dropped: no end decides them any more) and
// its row of litequeue_waits, which so holds a row exactly for each job
// that waits.
//
// Exactly once, also on a server with two dependencies of a job ending at
// once in two transactions: an edge changes only from open, under its
// dependency's row lock (the end writes the dependency's row first); the
// count of open edges is decremented by an UPDATE … RETURNING of the
// waiting job's litequeue_waits row, whose row lock orders the two
// transactions, so that exactly one of them sees it reach 0 and makes
// the job pending. A job enqueued with a dependency takes the
// dependency's row lock (addDependentsSQL) before it reads its state:
// an end that commits first is read as it ended; one that commits after
// sees, in its own UPDATE of the row, the dependents count this enqueue
// raised, and then reads the edges with a statement of its own, which
// sees them committed.

// The rules of a dependency's failure, and the states of an edge, as
// stored.
const (
	RuleCancel = "cancel"
	RuleWait   = "wait"
	RuleRun    = "run"

	EdgeOpen    = "open"
	EdgeMet     = "met"
	EdgeFailed  = "failed"
	EdgeDropped = "dropped"
)

// Deleted is the end of a dependency deleted before its edges were all
// decided, for EdgeFate: it can never complete.
const Deleted = "deleted"

// EdgeFate decides what the end of a dependency, in state end (a
// terminal state, or Deleted), does to an open edge of the given rule:
// the edge's new state, EdgeOpen for none.
func EdgeFate(end, rule string) string {
	switch {
	case end == "completed", rule == RuleRun:
		return EdgeMet
	case rule == RuleWait && end == "dead": // a replay may yet complete it
		return EdgeOpen
	}
	return EdgeFailed
}

// A Dep is one dependency of a job being enqueued: the ID of the job it
// depends on, and the rule of its failure; State is set only for a job
// being copied, to an edge's state as decided in the source (see
// DependCopied).
type Dep struct {
	ID    int64
	Rule  string
	State string
}

// Terminal reports whether a job in state no longer changes by itself:
// completed, dead, discarded, cancelled or expired.
func Terminal(state string) bool {
	switch state {
	case "completed", "dead", "discarded", "cancelled", "expired":
		return true
	}
	return false
}

// addDependentsSQL raises the dependents count of the dependencies of a
// job being enqueued, which also takes their row locks, and returns
// their states.
const addDependentsSQL = `UPDATE litequeue_jobs SET dependents = dependents + ? WHERE id IN (?) RETURNING id, state`

// addEdgesSQL adds edges; addEdgeRow the VALUES of each further one.
const (
	addEdgesSQL = `INSERT INTO litequeue_deps (job_id, depends_on, rule, state) VALUES (?, ?, ?, ?)`
	addEdgeRow  = `, (?, ?, ?, ?)`
)

// edgesChunk is how many edges one statement of addEdges adds: 4
// parameters each, well within SQLite's 32,766 and PostgreSQL's 65,535.
const edgesChunk = 500

const addWaitSQL = `INSERT INTO litequeue_waits (job_id, remaining) VALUES (?, ?)`

const toWaitingSQL = `UPDATE litequeue_jobs SET state = 'waiting' WHERE id IN (?) AND state = 'pending'`

// A NotFoundError is a dependency that names no job.
type NotFoundError struct{ ID int64 }

func (e *NotFoundError) Error() string { return fmt.Sprintf("dependency %d: no such job", e.ID) }

// Depend gives the jobs ids, just inserted pending in tx with the queue
// and kind given, the dependencies deps, and moves them to the state
// their dependencies put them in, which it returns: 'waiting' while any
// edge is open, 'cancelled' (with a history row naming the dependency,
// and the cause it names) if one failed under its rule, else 'pending'. A
// dependency that names no job is a *NotFoundError, and tx must then
// roll back.
func Depend(ctx context.Context, tx Execer, queue, kind string, ids []int64, deps []Dep, now int64) (state, cause string, err error) {
	return depend(ctx, tx, queue, kind, ids, deps, now, false)
}

// DependCopied is Depend for a job that Copy just inserted: a dependency
// whose State is set keeps its edge so decided in the source, and one
// that names no job (a copy an earlier Copy made, deleted since) counts
// as deleted.
func DependCopied(ctx context.Context, tx Execer, queue, kind string, id int64, deps []Dep, now int64) (state, cause string, err error) {
	return depend(ctx, tx, queue, kind, []int64{id}, deps, now, true)
}

// depend is Depend, or DependCopied if copied.
func depend(ctx context.Context, tx Execer, queue, kind string, ids []int64, deps []Dep, now int64, copied bool) (state, cause string, err error) {
	ends, err := lockDependencies(ctx, tx, len(ids), deps)
	if err != nil {
		return "", "", err
	}
	p, err := planEdges(deps, ends, copied)
	if err != nil {
		return "", "", err
	}
	for _, id := range ids {
		if err := addEdges(ctx, tx, id, deps, p.edges); err != nil {
			return "", "", err
		}
		if p.open > 0 {
			if _, err := tx.ExecContext(ctx, addWaitSQL, id, p.open); err != nil {
				return "", "", err
			}
		}
	}
	return p.apply(ctx, tx, queue, kind, ids, now)
}

// lockDependencies raises by n the dependents count of each of deps,
// which takes their row locks (see addDependentsSQL), and returns the
// states of those that exist, by ID.
func lockDependencies(ctx context.Context, tx Execer, n int, deps []Dep) (map[int64]string, error) {
	ids := make([]int64, len(deps))
	for i, d := range deps {
		ids[i] = d.ID
	}
	found, err := readIn[struct {
		ID    int64  `db:"id"`
		State string `db:"state"`
	}](ctx, tx, addDependentsSQL, ids, n)
	if err != nil {
		return nil, err
	}
	states := make(map[int64]string, len(found))
	for _, f := range found {
		states[f.ID] = f.State
	}
	return states, nil
}

// An edgePlan is how the edges of a job being enqueued start, decided
// from the states of its dependencies: each edge's state, how many are
// open, and the first that failed, with its dependency's end.
type edgePlan struct {
	edges     []string
	open      int
	failed    int64
	failedEnd string
}

// planEdges decides the edges to deps, whose states are states (a
// dependency missing from them names no job: a *NotFoundError, or, if
// copied, one deleted), and, if copied, a dependency with a State keeps
// it.
func planEdges(deps []Dep, states map[int64]string, copied bool) (edgePlan, error) {
	p := edgePlan{edges: make([]string, len(deps))}
	for i, d := range deps {
		st, ok := states[d.ID]
		switch {
		case copied && d.State != "":
			p.edges[i] = d.State
		case !ok && !copied:
			return p, &NotFoundError{ID: d.ID}
		case !ok:
			st, p.edges[i] = Deleted, EdgeFate(Deleted, d.Rule)
		case Terminal(st):
			p.edges[i] = EdgeFate(st, d.Rule)
		default:
			p.edges[i] = EdgeOpen
		}
		switch {
		case p.edges[i] == EdgeOpen:
			p.open++
		case p.edges[i] == EdgeFailed && p.failed == 0 && d.State == "":
			p.failed, p.failedEnd = d.ID, st
		}
	}
	return p, nil
}

// apply moves the jobs ids, just inserted pending with queue and kind,
// to the state p puts them in, at now, and returns it: cancelled (with
// the cause) if an edge failed, waiting if one is open, else pending.
func (p edgePlan) apply(ctx context.Context, tx Execer, queue, kind string, ids []int64, now int64) (state, cause string, err error) {
	var d Deltas
	switch {
	case p.failed != 0:
		for _, id := range ids {
			if _, err := cancelWaiting(ctx, tx, id, "pending", p.failed, p.failedEnd, now, &d); err != nil {
				return "", "", err
			}
		}
		return "cancelled", failedCause(p.failed, p.failedEnd), d.Flush(ctx, tx)
	case p.open > 0:
		for chunk := range slices.Chunk(ids, edgesChunk) {
			if err := execIn(ctx, tx, toWaitingSQL, chunk); err != nil {
				return "", "", err
			}
		}
		d.Add(queue, kind, "pending", -len(ids))
		d.Add(queue, kind, "waiting", len(ids))
		return "waiting", "", d.Flush(ctx, tx)
	}
	return "pending", "", nil
}

// addEdges adds the edges of the job id to deps, in the states edges
// gives, a chunk of edgesChunk to a statement.
func addEdges(ctx context.Context, tx Execer, id int64, deps []Dep, edges []string) error {
	args := make([]any, 0, 4*min(len(deps), edgesChunk))
	for len(deps) > 0 {
		n := min(len(deps), edgesChunk)
		args = args[:0]
		for i, d := range deps[:n] {
			args = append(args, id, d.ID, d.Rule, edges[i])
		}
		if _, err := tx.ExecContext(ctx, addEdgesSQL+strings.Repeat(addEdgeRow, n-1), args...); err != nil {
			return err
		}
		deps, edges = deps[n:], edges[n:]
	}
	return nil
}

// cancelWaitingSQL cancels a job whose dependency failed, if it is still
// in state from ('waiting', or 'pending' at its enqueue).
const cancelWaitingSQL = `UPDATE litequeue_jobs
	SET state = 'cancelled', finished_at = ?, last_error = ?, lease_until = 0, cancel = 0
	WHERE id = ? AND state = ? RETURNING ` + JobColumns + `, dependents`

// cancelWaiting cancels the job id, in state from, for the failure of
// its dependency dep, which ended in state end, at now, with a history
// row of outcome cancelled that names them; it adds the move to d, notes
// the cancel in tx's writer batch (noteResolved), and reports whether
// the job was in state from and has dependents of its own, whose edges
// its cancel must then resolve.
func cancelWaiting(ctx context.Context, tx Execer, id int64, from string, dep int64, end string, now int64, d *Deltas) (bool, error) {
	cause := failedCause(dep, end)
	var rows []struct {
		JobRow
		Dependents int `db:"dependents"`
	}
	if err := tx.SelectContext(ctx, &rows, cancelWaitingSQL, now, cause, id, from); err != nil || len(rows) == 0 {
		return false, err
	}
	r := &rows[0]
	d.Move(r.Queue, r.Kind, from, "cancelled")
	h := &HistoryRow{AttemptRow: AttemptRow{Attempt: r.Attempt, StartedAt: now, FinishedAt: now,
		Outcome: "cancelled", Error: cause, ErrorClass: "dependency"}, JobID: id, Kind: r.Kind, Next: "cancelled"}
	if from == "waiting" {
		noteResolved(tx, false, &r.JobRow, h)
	}
	if err := StoppedWaiting(ctx, tx, id); err != nil {
		return false, err
	}
	return r.Dependents > 0, AddHistoryRow(ctx, tx, h)
}

const dropEdgesSQL = `UPDATE litequeue_deps SET state = 'dropped' WHERE job_id = ? AND state = 'open'`

// StoppedWaiting drops, in tx, the edges still open of the job id, which
// stopped waiting without its release (it was cancelled), and its row of
// litequeue_waits: no end decides them any more.
func StoppedWaiting(ctx context.Context, tx Execer, id int64) error {
	if _, err := tx.ExecContext(ctx, dropEdgesSQL, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, deleteWaitSQL, id)
	return err
}

// failedCause is the error text of a job cancelled because its
// dependency dep ended in state end.
func failedCause(dep int64, end string) string {
	return fmt.Sprintf("dependency %d %s", dep, end)
}

// An Ended job is one whose end its dependents must learn of: its ID,
// its state (terminal) or Deleted, and when it ended.
type Ended struct {
	ID    int64
	State string
	At    int64
}

const openEdgesSQL = `SELECT job_id, rule FROM litequeue_deps WHERE depends_on = ? AND state = 'open' ORDER BY job_id`

const setEdgeSQL = `UPDATE litequeue_deps SET state = ? WHERE job_id = ? AND depends_on = ? AND state = 'open'`

const decOpenSQL = `UPDATE litequeue_waits SET remaining = remaining - 1 WHERE job_id = ? RETURNING remaining`

const deleteWaitSQL = `DELETE FROM litequeue_waits WHERE job_id = ?`

// releaseSQL makes a waiting job whose last edge was met pending, due at
// its RunAt or at now if that has passed; its expiry, if any, moves by
// as much as its RunAt did, as ExpireAfter counts from the moment a job
// is first due. (Every SET reads the row as it was.)
const releaseSQL = `UPDATE litequeue_jobs
	SET state = 'pending',
	    run_at = CASE WHEN run_at < ? THEN ? ELSE run_at END,
	    expires_at = CASE WHEN run_at < ? THEN expires_at + (? - run_at) ELSE expires_at END
	WHERE id = ? AND state = 'waiting' RETURNING queue, kind`

// Resolve tells the dependents of the jobs ended, in tx, of their ends,
// each at the time it ended: it decides each open edge (EdgeFate), makes pending each waiting
// job whose last edge it met, and cancels each one whose edge failed,
// resolving its own dependents in turn. It reports how many jobs it made
// pending, for the caller to wake the workers at the commit.
func Resolve(ctx context.Context, tx Execer, ended []Ended) (released int, err error) {
	var d Deltas
	for len(ended) > 0 {
		e := ended[0]
		ended = ended[1:]
		var edges []struct {
			Job  int64  `db:"job_id"`
			Rule string `db:"rule"`
		}
		if err := tx.SelectContext(ctx, &edges, openEdgesSQL, e.ID); err != nil {
			return 0, err
		}
		for _, edge := range edges {
			fate := EdgeFate(e.State, edge.Rule)
			if fate == EdgeOpen {
				continue
			}
			if ok, err := wrote(tx.ExecContext(ctx, setEdgeSQL, fate, edge.Job, e.ID)); err != nil {
				return 0, err
			} else if !ok {
				continue // deleted since it was read, by another transaction on a server (raw SQL: see StoppedWaiting)
			}
			if fate == EdgeFailed {
				more, err := cancelWaiting(ctx, tx, edge.Job, "waiting", e.ID, e.State, e.At, &d)
				if err != nil {
					return 0, err
				}
				if more {
					ended = append(ended, Ended{ID: edge.Job, State: "cancelled", At: e.At})
				}
				continue
			}
			ok, err := meetEdge(ctx, tx, edge.Job, e.At, &d)
			if err != nil {
				return 0, err
			}
			if ok {
				released++
			}
		}
	}
	if released > 0 {
		noteResolved(tx, true, nil, nil)
	}
	return released, d.Flush(ctx, tx)
}

// meetEdge counts one edge of the job id met, at now, and, if it was its
// last open one, makes the job pending and reports true.
func meetEdge(ctx context.Context, tx Execer, id, now int64, d *Deltas) (bool, error) {
	var open []int64
	if err := tx.SelectContext(ctx, &open, decOpenSQL, id); err != nil || len(open) == 0 || open[0] > 0 {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, deleteWaitSQL, id); err != nil {
		return false, err
	}
	var rows []jobGroup
	if err := tx.SelectContext(ctx, &rows, releaseSQL, now, now, now, now, id); err != nil || len(rows) == 0 {
		return false, err
	}
	d.Move(rows[0].Queue, rows[0].Kind, "waiting", "pending")
	return true, nil
}

// A resolvedNote is what the writer batch that runs has done to the
// dependents of the jobs it ended: whether it made one pending, for the
// writer to wake this process's idle Work loops at the commit (see
// Writer.WakeOwn); the jobs it cancelled, with their history rows, for
// the writer to count in the throughput and tell one of the batch's ops
// of after the commit (Op.Cancelled).
type resolvedNote struct {
	released  bool
	cancelled []JobRow
	history   []*HistoryRow
}

// noteResolved notes in the writer batch that runs on tx, if any, that
// Resolve made a job pending (released), or cancelled the job row with
// its history row h.
func noteResolved(tx Execer, released bool, row *JobRow, h *HistoryRow) {
	c, ok := tx.(*Conn)
	if !ok {
		return
	}
	c.resolved.released = c.resolved.released || released
	if row != nil {
		c.resolved.cancelled, c.resolved.history = append(c.resolved.cancelled, *row), append(c.resolved.history, h)
	}
}

// An EdgeRow is a row of litequeue_deps.
type EdgeRow struct {
	Job   int64  `db:"job_id"`
	On    int64  `db:"depends_on"`
	Rule  string `db:"rule"`
	State string `db:"state"`
}

// A NodeRow is what a graph shows of a job.
type NodeRow struct {
	ID      int64  `db:"id"`
	Kind    string `db:"kind"`
	Queue   string `db:"queue"`
	State   string `db:"state"`
	Attempt int    `db:"attempt"`
}

const (
	edgesOfSQL   = `SELECT job_id, depends_on, rule, state FROM litequeue_deps WHERE job_id IN (?) ORDER BY job_id, depends_on`
	edgesIntoSQL = `SELECT job_id, depends_on, rule, state FROM litequeue_deps WHERE depends_on IN (?) ORDER BY depends_on, job_id`
	nodesSQL     = `SELECT id, kind, queue, state, attempt FROM litequeue_jobs WHERE id IN (?) ORDER BY id`
)

// readChunk is how many IDs one read of EdgesOf, EdgesInto and Nodes
// names.
const readChunk = 1000

// EdgesOf returns the edges of the jobs ids to the jobs they depend on,
// read on db.
func EdgesOf(ctx context.Context, db Execer, ids []int64) ([]EdgeRow, error) {
	return readIn[EdgeRow](ctx, db, edgesOfSQL, ids)
}

// EdgesInto returns the edges into the jobs ids from the jobs that
// depend on them, read on db.
func EdgesInto(ctx context.Context, db Execer, ids []int64) ([]EdgeRow, error) {
	return readIn[EdgeRow](ctx, db, edgesIntoSQL, ids)
}

// Nodes returns what a graph shows of the jobs ids that exist, read on db.
func Nodes(ctx context.Context, db Execer, ids []int64) ([]NodeRow, error) {
	return readIn[NodeRow](ctx, db, nodesSQL, ids)
}

// readIn runs query, whose one (?) list takes ids, a chunk of readChunk
// at a time, after the arguments before, and returns all rows.
func readIn[T any](ctx context.Context, db Execer, query string, ids []int64, before ...any) ([]T, error) {
	var all []T
	for chunk := range slices.Chunk(ids, readChunk) {
		var rows []T
		if err := selectIn(ctx, db, &rows, query, append(before[:len(before):len(before)], chunk)...); err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
}

// A JobValue is a value kept of a job (its output, say), with the job's
// queue and kind, which sealed it.
type JobValue struct {
	ID    int64  `db:"id"`
	Queue string `db:"queue"`
	Kind  string `db:"kind"`
	Value []byte `db:"value"`
}

const dependencyOutputsSQL = `SELECT d.depends_on AS id, j.queue, j.kind, o.output AS value
	FROM litequeue_deps d JOIN litequeue_outputs o ON o.job_id = d.depends_on
	JOIN litequeue_jobs j ON j.id = d.depends_on
	WHERE d.job_id = ? ORDER BY d.depends_on`

// DependencyOutputs returns the outputs of the jobs that the job id
// depends on, of those that have one, read on db.
func DependencyOutputs(ctx context.Context, db Execer, id int64) ([]JobValue, error) {
	return selectAll[JobValue](ctx, db, dependencyOutputsSQL, id)
}

// A StateN is a number of jobs in one state.
type StateN struct {
	State string `db:"state"`
	N     int    `db:"n"`
}

const dependencyStatesSQL = `SELECT coalesce(j.state, '') AS state, COUNT(*) AS n
	FROM litequeue_deps d LEFT JOIN litequeue_jobs j ON j.id = d.depends_on
	WHERE d.job_id = ? GROUP BY coalesce(j.state, '') ORDER BY 1`

// DependencyStates counts the jobs that the job id depends on by their
// state, read on db: the empty state for those that are gone.
func DependencyStates(ctx context.Context, db Execer, id int64) ([]StateN, error) {
	return selectAll[StateN](ctx, db, dependencyStatesSQL, id)
}

// strandedSQL finds the ends that the open edges of waiting jobs missed:
// dependencies ended (but dead under rule wait, which keeps its edge
// open) or gone, whose jobs still wait. litequeue's own writes leave
// none (see Resolve); raw SQL on the jobs may. It reads no more than
// the waiting jobs' edges: none where no job waits.
const strandedSQL = `SELECT DISTINCT d.depends_on
	FROM litequeue_waits w
	JOIN litequeue_jobs wj ON wj.id = w.job_id AND wj.state = 'waiting'
	JOIN litequeue_deps d ON d.job_id = w.job_id AND d.state = 'open'
	LEFT JOIN litequeue_jobs j ON j.id = d.depends_on
	WHERE j.id IS NULL
	   OR (j.state IN ('completed', 'discarded', 'cancelled', 'expired'))
	   OR (j.state = 'dead' AND d.rule <> 'wait')
	ORDER BY 1 LIMIT ?`

// Stranded returns the IDs of up to limit jobs whose end the open edges
// of waiting jobs missed, for Resolve to tell their dependents once the
// jobs are read again under the write's lock. It takes no lock.
func Stranded(ctx context.Context, db Execer, limit int) ([]int64, error) {
	return selectAll[int64](ctx, db, strandedSQL, limit)
}
