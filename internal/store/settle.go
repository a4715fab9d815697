package store

import (
	"context"
	"errors"
)

const setRowSQL = `UPDATE litequeue_jobs
	SET state = ?, attempt = ?, run_at = ?, finished_at = ?, last_error = ?,
	    lease_until = 0, cancel = 0
	WHERE id = ?`

// setHeldRowSQL is setRowSQL fenced by the lease: it changes the row only
// while the holder's token is current and no Cancel came.
const setHeldRowSQL = setRowSQL + ` AND token = ? AND created_at = ? AND state = 'running' AND cancel = 0`

// dependentsSQL reads a job's count of dependents. Read after the job's
// row was written in the same transaction, it counts every dependent
// whose enqueue committed before (which a server's row lock orders), not
// one of an enqueue still under way, which reads the job's state after
// this transaction's commit (see Depend). A RETURNING clause on the
// file's UPDATE would make SQLite build a table for its row each time.
const dependentsSQL = `SELECT dependents FROM litequeue_jobs WHERE id = ?`

// waitsSeen is what a batch of ends, settled a row at a time in one
// transaction of writers that take turns (the file's), has read of
// litequeue_waits: whether any job waits for dependencies. None waiting,
// no end has an open edge to decide (only a job that waits has one: see
// StoppedWaiting), and the ends read no count of dependents: one probe
// for the batch, where a read per end cost the file's drain about 8%.
type waitsSeen struct {
	read, any bool
}

const anyWaitsSQL = `SELECT EXISTS (SELECT 1 FROM litequeue_waits)`

// hasDependents is hasDependents of the package, once some job waits.
func (w *waitsSeen) hasDependents(ctx context.Context, tx Execer, id int64) (bool, error) {
	if !w.read {
		if err := tx.GetContext(ctx, &w.any, anyWaitsSQL); err != nil {
			return false, err
		}
		w.read = true
	}
	if !w.any {
		return false, nil
	}
	return hasDependents(ctx, tx, id)
}

// hasDependents reports whether the job id has dependents, read in tx
// after its row was written (see dependentsSQL).
func hasDependents(ctx context.Context, tx Execer, id int64) (bool, error) {
	var n int64
	err := tx.GetContext(ctx, &n, dependentsSQL, id)
	if errors.Is(err, ErrNoRows) {
		return false, nil
	}
	return n > 0, err
}

// jobGroupSQL reads the group of a job's kept count.
const jobGroupSQL = `SELECT queue, kind, state FROM litequeue_jobs WHERE id = ?`

// SetRow writes the job's row as after is: its state, attempt, RunAt,
// FinishedAt and last error, holding no lease and no cancel request.
// Where the database does not count the jobs itself, it reads the row's
// state first, and moves the job's count from it to after's. A job that
// ends so tells its dependents, if it has any (Resolve).
func SetRow(ctx context.Context, tx Execer, after *JobRow) error {
	a := after
	var before jobGroup
	counting := !KeepsCounts(tx)
	if counting {
		if err := tx.GetContext(ctx, &before, jobGroupSQL, a.ID); errors.Is(err, ErrNoRows) {
			return nil // no job: nothing to write
		} else if err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, setRowSQL, a.State, a.Attempt, a.RunAt, a.FinishedAt, a.LastError, a.ID); err != nil {
		return err
	}
	if counting {
		var d Deltas
		d.Move(before.Queue, before.Kind, before.State, a.State)
		if err := d.Flush(ctx, tx); err != nil {
			return err
		}
	}
	if !Terminal(a.State) {
		return nil
	}
	if has, err := hasDependents(ctx, tx, a.ID); err != nil || !has {
		return err
	}
	_, err := Resolve(ctx, tx, []Ended{{ID: a.ID, State: a.State, At: a.FinishedAt.Int64}})
	return err
}

// SetHeldRow is SetRow for the holder of the lease on the row as claimed,
// claimed: it writes the row only while the lease holds, and reports
// false, having changed nothing, when it does not. Unlike SetRow, it
// does not tell the job's dependents of its end.
func SetHeldRow(ctx context.Context, tx Execer, claimed, after *JobRow) (bool, error) {
	a := after
	return wrote(tx.ExecContext(ctx, setHeldRowSQL, a.State, a.Attempt, a.RunAt, a.FinishedAt, a.LastError,
		a.ID, claimed.Token, claimed.CreatedAt))
}

// The ends of the runs that one writer batch commits are settled
// together (see Writer.settle): a statement costs the file several times
// the row it writes, and a server a round trip, and a drain commits a
// batch of ends per fsync.

// A Settler stores the ends of a batch of runs, in the statements that
// suit its database best: a server's in one statement for the rows and
// their history (one round trip); a file's in a statement per row, as one
// UPDATE FROM VALUES for many rows is no faster there (BenchmarkSettle in
// store/sqlite), and its history in chunks (AddHistory).
type Settler interface {
	// SetHeldRows is SetHeldRow for each of rows, in tx, adding the
	// history row of each whose fence held; it reports, for each, whether
	// its fence held and its row and history are written, and sets
	// Dependents of each written that ends a job with dependents (as its
	// row is once written: see dependentsSQL).
	SetHeldRows(ctx context.Context, tx Execer, rows []HeldRow) ([]bool, error)
	// AddHistory adds the history rows, in their order.
	AddHistory(ctx context.Context, tx Execer, rows []*HistoryRow) error
}

// A HeldRow is a job's row after a run, to write fenced by the lease of
// the row as claimed (see SetHeldRow), with its history row.
type HeldRow struct {
	Claimed *JobRow // its token and created_at fence the write
	After   *JobRow
	History *HistoryRow // added if the fence holds; nil: none
	Output  []byte      // written if the fence holds (SetOutput); nil: none
	// Dependents is set by SetHeldRows for a row written whose job has
	// dependents: they must be told of its end (Resolve).
	Dependents bool
}

// SetHeldRowEach is SetHeldRow for each of rows, a statement each, with
// the output of each whose fence held and, of those that end, a read of
// whether they have dependents, and then AddHistory of the history rows
// of those whose fence held.
func SetHeldRowEach(ctx context.Context, tx Execer, rows []HeldRow) ([]bool, error) {
	held := make([]bool, len(rows))
	var history []*HistoryRow
	var d Deltas
	var waits waitsSeen
	for i, r := range rows {
		ok, err := SetHeldRow(ctx, tx, r.Claimed, r.After)
		if err != nil {
			return nil, err
		}
		held[i] = ok
		if ok && Terminal(r.After.State) {
			if rows[i].Dependents, err = waits.hasDependents(ctx, tx, r.After.ID); err != nil {
				return nil, err
			}
		}
		if ok {
			d.Move(r.Claimed.Queue, r.Claimed.Kind, "running", r.After.State) // the fence held: it was running
		}
		if ok && r.Output != nil {
			if err := SetOutput(ctx, tx, r.After.ID, r.Output); err != nil {
				return nil, err
			}
		}
		if ok && r.History != nil {
			history = append(history, r.History)
		}
	}
	if err := d.Flush(ctx, tx); err != nil {
		return nil, err
	}
	return held, AddHistory(ctx, tx, history)
}

// A RunEnd is how a run ended, as decided: the job's row after it and its
// history row, for the writer to store fenced by the lease that claimed
// it, with the other ends of its batch.
type RunEnd[N any] struct {
	Claimed *JobRow     // the row as claimed: its token and created_at fence the write
	After   JobRow      // the job's row after the run
	History *HistoryRow // nil: none
	// Output is what the run recorded, stored with the end if the end is
	// stored as completed: by its fence holding, or decided again
	// (CompleteTx completed the job under the run's lease). nil: none.
	Output []byte
	// Gated says that the gate counts the end: its kind has a limit or a
	// breaker (see Steps.Ran).
	Gated bool
	// Next says that the worker asks for its next job, to be claimed in
	// the same transaction (see Steps.Claim).
	Next bool
	// Note is the machinery's own: what it asks of its steps of the
	// settle (the worker's next job), and what they tell it back.
	Note N
	// Stored is set by the settle: the end is stored, as After and
	// History say. When the fence did not hold (the row changed since the
	// claim: CompleteTx, Cancel, a lost lease), Steps.Redecide decided the
	// end again on the row as it is, in the same transaction, and set
	// After and History to that; Stored is false when the run lost the
	// job, and nothing of the end is stored.
	Stored bool
}

// Steps are what the settle of a batch of run ends asks of the machinery
// above the store, in the batch's transaction: to decide again an end
// whose fence did not hold, and, once the ends are stored, the gate's
// bookkeeping and the chained claims. A step may run more than once (when
// the batch runs again), and sets what it tells back afresh.
type Steps[N any] interface {
	// Redecide decides the end e again on the job's row as it is, which
	// changed since the claim (CompleteTx completed it under the same
	// lease, or Cancel asked the run to stop), and writes the row as it
	// decides; it sets e.After and e.History to the decision. It reports
	// false, having written nothing, when the run lost the job.
	Redecide(ctx context.Context, tx Execer, e *RunEnd[N]) (bool, error)
	// Ran tells the gate of the stored ends whose kind it counts.
	Ran(ctx context.Context, tx Execer, ends []*RunEnd[N]) error
	// Claim claims the next jobs that the workers of the ends ask for
	// (RunEnd.Next), once the ends freed their places.
	Claim(ctx context.Context, tx Execer, ends []*RunEnd[N]) error
}

// settle stores the run ends of a batch in tx: the jobs' rows, each
// fenced by its run's lease, and the history rows of those whose fence
// held, all at once (Settler.SetHeldRows); an end whose fence does not
// hold is decided again on the row as it is, alone (Steps.Redecide), and
// the history rows of those stored so, all at once (Settler.AddHistory);
// then the throughput of every stored end (CountEnds), and the steps of
// the machinery: the gate's bookkeeping of the gated ends, and the
// chained claims. A job made pending again (a retry, a release) wakes
// this process's idle loops at the commit.
func (w *Writer[N]) settle(ctx context.Context, tx Execer, ends []*RunEnd[N]) error {
	s, err := w.setRows(ctx, tx, ends)
	if err != nil {
		return err
	}
	if err := w.Engine.AddHistory(ctx, tx, s.redecided); err != nil {
		return err
	}
	if len(s.ended) > 0 {
		if _, err := Resolve(ctx, tx, s.ended); err != nil {
			return err
		}
	}
	if err := CountEnds(ctx, tx, w.Shard, s.history); err != nil { // the throughput of the stored ends
		return err
	}
	if len(s.gated) > 0 {
		if err := w.Steps.Ran(ctx, tx, s.gated); err != nil {
			return err
		}
	}
	var next []*RunEnd[N]
	for _, e := range ends {
		if e.Next {
			next = append(next, e)
		}
	}
	if len(next) == 0 {
		return nil
	}
	return w.Steps.Claim(ctx, tx, next)
}

// stored is what setRows stored of a batch's ends: the history rows of
// every stored end, those of the ends decided again (which SetHeldRows
// did not add), and the stored ends that the gate counts.
type stored[N any] struct {
	history, redecided []*HistoryRow
	gated              []*RunEnd[N]
	ended              []Ended // the ends written fenced, of jobs with dependents
}

// setRows writes the jobs' rows of the ends in tx, each fenced by its
// run's lease, and the history rows of those whose fence held, all at
// once, and decides again alone each end whose fence does not hold; it
// sets each end's Stored.
func (w *Writer[N]) setRows(ctx context.Context, tx Execer, ends []*RunEnd[N]) (s stored[N], err error) {
	rows := heldRows(ends)
	held, err := w.Engine.SetHeldRows(ctx, tx, rows)
	if err != nil {
		return s, err
	}
	for i, e := range ends {
		if held[i] && rows[i].Dependents && Terminal(e.After.State) {
			s.ended = append(s.ended, Ended{ID: e.After.ID, State: e.After.State, At: e.After.FinishedAt.Int64})
		}
		if e.Stored = held[i]; !e.Stored {
			if e.Stored, err = w.Steps.Redecide(ctx, tx, e); err != nil {
				return s, err
			}
			if err := storeOutput(ctx, tx, e); err != nil {
				return s, err
			}
			s.redecided = storedHistory(s.redecided, e)
		}
		if !e.Stored {
			continue
		}
		s.history = storedHistory(s.history, e)
		if e.After.State == "pending" {
			w.WakeOwn()
		}
		if e.Gated {
			s.gated = append(s.gated, e)
		}
	}
	return s, nil
}

// storedHistory appends the history row of e, if it has one and is
// stored.
func storedHistory[N any](history []*HistoryRow, e *RunEnd[N]) []*HistoryRow {
	if !e.Stored || e.History == nil {
		return history
	}
	return append(history, e.History)
}

// heldRows are the rows of the ends to write, each fenced by its lease,
// with their history.
func heldRows[N any](ends []*RunEnd[N]) []HeldRow {
	rows := make([]HeldRow, len(ends))
	for i, e := range ends {
		rows[i] = HeldRow{Claimed: e.Claimed, After: &e.After, History: e.History, Output: e.output()}
	}
	return rows
}

// output is the output to store with e: e.Output if e ends completed.
func (e *RunEnd[N]) output() []byte {
	if e.After.State != "completed" {
		return nil
	}
	return e.Output
}

// historyChunk is how many rows one statement of AddHistory adds. A
// statement costs the file several times the row it writes, and a server
// a round trip; a fixed chunk keeps the statements few in kind, as each
// is prepared once (see stmtCache), and the rows left over take a
// statement each.
const historyChunk = 8

// addHistorySQL adds historyChunk rows.
var addHistorySQL = InsertAttemptsSQL(historyChunk)

// AddHistory adds the history rows, in their order: a chunk of
// historyChunk at a time (one INSERT of many rows' VALUES), and the rest
// one at a time.
func AddHistory(ctx context.Context, tx Execer, rows []*HistoryRow) error {
	var args []any // reused from chunk to chunk
	for len(rows) >= historyChunk {
		args = args[:0]
		for _, h := range rows[:historyChunk] {
			args = h.Values(args)
		}
		if _, err := tx.ExecContext(ctx, addHistorySQL, args...); err != nil {
			return err
		}
		rows = rows[historyChunk:]
	}
	for _, h := range rows {
		if err := AddHistoryRow(ctx, tx, h); err != nil {
			return err
		}
	}
	return nil
}

// storeOutput stores the output of e, decided again, if it is stored as
// completed (CompleteTx completed the job under the run's lease).
func storeOutput[N any](ctx context.Context, tx Execer, e *RunEnd[N]) error {
	if out := e.output(); e.Stored && out != nil {
		return SetOutput(ctx, tx, e.After.ID, out)
	}
	return nil
}
