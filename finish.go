package litequeue

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// ending says how a run ended, before the job's row decides where it goes.
type ending struct {
	outcome   Outcome // "" for a release at shutdown: no try used, no history
	errText   string
	class     string
	delay     time.Duration // before the next run: a retry's, or a snooze's
	permanent bool          // a failure never retried
}

// failure reports whether the ending is a failed try.
func (e ending) failure() bool {
	switch e.outcome {
	case OutcomeFailed, OutcomePanicked, OutcomeTimedOut, OutcomeLeaseExpired:
		return true
	}
	return false
}

// eventTypes maps a job's state after a run to the event it fires.
var eventTypes = map[State]string{
	Completed: "job.completed",
	Dead:      "job.dead",
	Discarded: "job.discarded",
	Cancelled: "job.cancelled",
}

const settleSQL = `UPDATE litequeue_jobs
	SET state = ?, attempt = ?, run_at = ?, finished_at = ?, last_error = ?,
	    lease_until = 0, cancel = 0
	WHERE id = ?
	RETURNING ` + jobColumns

const insertAttemptSQL = `INSERT INTO litequeue_attempts
	(job_id, attempt, started_at, finished_at, outcome, error, error_class, delay, worker, kind, next_state)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// move is where a job goes: the values of its row after a run (or a
// Cancel), which no longer hold a lease.
type move struct {
	state     State
	attempt   int
	runAt     sql.NullInt64
	finished  sql.NullInt64
	lastError string
	delay     time.Duration // the wait before the next run, if any
}

// route decides where the ending e of the run in row cur sends the job at
// now, and the outcome to record for the run (a run of a job that Cancel
// asked to stop is recorded cancelled).
func route(cur *jobRow, e ending, now time.Time) (move, Outcome) {
	m := move{state: cur.State, attempt: cur.Attempt, runAt: cur.RunAt, lastError: cur.LastError}
	outcome := e.outcome
	switch {
	case cur.Cancel:
		// Cancel asked for it: nothing brings it back, and the run is
		// cancelled whatever it returned, even nil (only a CompleteTx
		// committed before the Cancel completes it; see finish).
		m.state = Cancelled
		if e.outcome != OutcomeLeaseExpired {
			outcome = OutcomeCancelled
		}
	case e.outcome == OutcomeCompleted:
		m.state, m.runAt, m.lastError = Completed, sql.NullInt64{}, ""
	case e.outcome == OutcomeDiscarded:
		m.state = Discarded
	case e.outcome == OutcomeCancelled:
		m.state = Cancelled
	case e.outcome == OutcomeSnoozed, e.outcome == "":
		m.state, m.attempt, m.delay = Pending, m.attempt-1, e.delay
		m.runAt = nullMS(now.Add(m.delay))
	case e.permanent || cur.Attempt >= cur.MaxTries:
		m.state, m.lastError = Dead, e.errText
	default:
		m.state, m.lastError, m.delay = Pending, e.errText, e.delay
		m.runAt = nullMS(now.Add(m.delay))
	}
	if m.state.terminal() {
		m.finished = nullMS(now)
	}
	return m, outcome
}

// apply writes the move to the job's row and returns the row as it is after.
func (m move) apply(ctx context.Context, tx execer, id int64) (*jobRow, error) {
	row := new(jobRow)
	err := tx.GetContext(ctx, row, settleSQL, m.state, m.attempt, m.runAt, m.finished, m.lastError, id)
	return row, err
}

// settle moves the job in row cur, whose run started at started by worker,
// to where the ending sends it, records the run in its history, and returns
// the event to fire after the commit (Type "" for none). The caller has
// checked that it may: it holds the lease, or the lease expired.
func settle(ctx context.Context, tx execer, cur *jobRow, e ending, started time.Time, worker string, now time.Time) (Event, error) {
	var m move
	m, e.outcome = route(cur, e, now)
	row, err := m.apply(ctx, tx, cur.ID)
	if err != nil {
		return Event{}, err
	}
	return record(ctx, tx, cur, m, e, row.job(), started, worker, now)
}

const settleHeldSQL = `UPDATE litequeue_jobs
	SET state = ?, attempt = ?, run_at = ?, finished_at = ?, last_error = ?,
	    lease_until = 0, cancel = 0
	WHERE id = ? AND token = ? AND created_at = ? AND state = 'running' AND cancel = 0`

// settleHeld is settle for the holder of the lease l, in one statement:
// it moves the job as l's claimed row says — which is still the job's row
// while the holder's token is current and no Cancel came — and reports
// false, having changed nothing, when it is not.
func settleHeld(ctx context.Context, tx execer, l *lease, e ending, now time.Time) (Event, bool, error) {
	m, outcome := route(&l.row, e, now)
	e.outcome = outcome
	res, err := tx.ExecContext(ctx, settleHeldSQL, m.state, m.attempt, m.runAt, m.finished, m.lastError,
		l.row.ID, l.row.Token, l.row.CreatedAt)
	if err != nil {
		return Event{}, false, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return Event{}, false, err
	}
	after := *l.job
	after.State, after.Attempt, after.LastError = m.state, m.attempt, m.lastError
	after.RunAt, after.FinishedAt = nullTime(m.runAt), nullTime(m.finished)
	ev, err := record(ctx, tx, &l.row, m, e, &after, l.started, l.worker, now)
	return ev, true, err
}

// record adds the history row of a run that moved the job in row cur by m
// (the job is after, now), and returns the event to fire after the commit.
func record(ctx context.Context, tx execer, cur *jobRow, m move, e ending, after *Job, started time.Time, worker string, now time.Time) (Event, error) {
	if e.outcome == "" {
		return Event{}, nil // released: not a run of its own
	}
	ev := Event{Job: *after, At: now, Delay: m.delay}
	if e.failure() {
		ev.Err = e.errText
	}
	_, err := tx.ExecContext(ctx, insertAttemptSQL, cur.ID, cur.Attempt, ms(started), ms(now),
		e.outcome, e.errText, e.class, m.delay.Milliseconds(), worker, cur.Kind, m.state)
	if err != nil {
		return Event{}, err
	}
	switch {
	case m.state == Pending && e.outcome == OutcomeSnoozed:
		ev.Type = "job.snoozed"
	case m.state == Pending:
		ev.Type = "job.retry"
	default:
		ev.Type = eventTypes[m.state]
	}
	return ev, nil
}

const jobByIDSQL = `SELECT ` + jobColumns + ` FROM litequeue_jobs WHERE id = ?`

// holder reads the row of job — a leased job, as its handler got it — and
// checks that the lease token is still the current one on a running job;
// else ErrLeaseLost. A job already completed under the same token
// (CompleteTx) is reported through done.
//
// An ID names one job for good: it is never given to another job, also
// after retention purged the job (litequeue_jobs.id is AUTOINCREMENT since
// schema version 3), so a worker paused for longer than the retention finds
// no row. CreatedAt is compared as well, as settleHeld does: a file
// migrated from version 2 may hold a job that got the ID of a job purged
// before the upgrade.
func holder(ctx context.Context, tx execer, job *Job) (row *jobRow, done bool, err error) {
	row = new(jobRow)
	if err := tx.GetContext(ctx, row, jobByIDSQL, job.ID); err != nil {
		if errors.Is(err, errNoRows) {
			return nil, false, ErrLeaseLost
		}
		return nil, false, err
	}
	switch {
	case row.Token != job.token || row.CreatedAt != ms(job.CreatedAt):
		return nil, false, ErrLeaseLost
	case row.State == Completed:
		return row, true, nil
	case row.State != Running:
		return nil, false, ErrLeaseLost
	}
	return row, false, nil
}

// finish commits how a run ended, if the run still holds the lease, and
// fires its event. It returns ErrLeaseLost, having changed nothing, if it
// does not. A completion of a job that CompleteTx already completed under
// this lease adds the history row only.
//
// With a claimer, finish also claims the worker's next job in the same
// transaction, so a busy worker pays one commit per job, shared with every
// other worker finishing at the same time.
func (q *Queue) finish(ctx context.Context, l *lease, e ending, next *claimer) (*lease, error) {
	var ev Event
	var ask *claimAsk
	if next != nil {
		ask = &claimAsk{c: next}
	}
	err := q.submit(&writeOp{ctx: ctx, ask: ask, fn: func(tx execer) error {
		now := q.now()
		var held bool
		var err error
		if ev, held, err = settleHeld(ctx, tx, l, e, now); err == nil && !held {
			ev, err = settleStale(ctx, tx, l, e, now)
		}
		return err
	}})
	if err != nil {
		return nil, err
	}
	var chained *lease
	if ask != nil && ask.got != nil {
		chained = ask.got
		q.hold(chained) // before OnEvent, which may take its time
	}
	if ev.Type != "" {
		q.emit(ev)
	}
	if chained != nil {
		q.emit(startedEvents([]*lease{chained}, ask.at)...)
	}
	return chained, nil
}

// settleStale settles a run whose claimed row is no longer the job's: it
// returns ErrLeaseLost if the lease is gone; records the run of a job that
// CompleteTx already completed under this lease; and settles a run whose
// job Cancel asked to stop.
func settleStale(ctx context.Context, tx execer, l *lease, e ending, now time.Time) (Event, error) {
	row, done, err := holder(ctx, tx, l.job)
	if err != nil {
		return Event{}, err
	}
	if !done {
		return settle(ctx, tx, row, e, l.started, l.worker, now)
	}
	// The completion stands, whatever the handler returned after it; only
	// the history row is missing.
	_, err = tx.ExecContext(ctx, insertAttemptSQL, row.ID, row.Attempt, ms(l.started), ms(now),
		OutcomeCompleted, e.errText, e.class, 0, l.worker, row.Kind, Completed)
	return Event{Type: eventTypes[Completed], Job: *row.job(), At: now}, err
}
