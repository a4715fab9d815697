package litequeue

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// acts does the operator's acts on jobs — a cancel, a delete, a run now, a
// replay of one job or of a batch of dead jobs — each in a write
// transaction on the job's row as it is then, and fires their events after
// the commit. What an act does to a job is the act's own (cancel.go,
// delete.go, runnow.go, dead.go); acts holds what they share.
type acts struct {
	st     *storage
	clock  clock.Clock
	events *emitter
	wake   *signal // wakes idle Work loops for a job made due
	worker string  // the Worker of the history rows of replays and run nows
	logger *slog.Logger
}

// on runs act, the act op, in a write transaction on the row of job id as
// it is then, and fires the event act returns, if any, after the commit
// (waking idle workers first if wake). act may run more than once (see
// store.Writer.Do): it sets its results afresh each time. A missing job is
// ErrNotFound, and every error names op and the ID (see jobError).
func (a *acts) on(ctx context.Context, op string, id int64, wake bool, act func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error)) error {
	var ev Event
	err := a.st.write(ctx, func(tx store.Execer) error {
		row, err := store.LockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		ev, err = act(tx, row, a.clock.Now())
		return err
	})
	if err != nil {
		return jobError(op, id, err)
	}
	if ev.Type != "" {
		if wake {
			a.wake.fire()
		}
		a.events.emit(ev)
	}
	return nil
}

// replayIDs replays, in one transaction, the jobs with the given IDs that
// are still dead, skipping those whose unique key a live job holds, then
// wakes the workers and fires the events. It returns how many it replayed.
func (a *acts) replayIDs(ctx context.Context, ids []int64) (int, error) {
	var events []Event
	err := a.st.write(ctx, func(tx store.Execer) error {
		events = events[:0]
		now := a.clock.Now()
		rows, err := store.DeadJobs(ctx, tx, ids)
		if err != nil {
			return err
		}
		for i := range rows {
			ev, err := a.replay(ctx, tx, &rows[i], now)
			var ke *keyHeldError
			if errors.As(err, &ke) {
				a.logger.Warn("litequeue: replay skipped a dead job", "err", err)
				continue
			}
			if err != nil {
				return err
			}
			events = append(events, ev)
		}
		return nil
	})
	if err != nil || len(events) == 0 {
		return 0, err
	}
	a.wake.fire()
	a.events.emit(events...)
	return len(events), nil
}

// replay puts the dead job in row back as pending at now and records the
// replay in its history, unless a live job holds its unique key
// (*keyHeldError). It returns the event to fire after the commit.
func (a *acts) replay(ctx context.Context, tx store.Execer, row *store.JobRow, now time.Time) (Event, error) {
	if row.UniqueKey.Valid {
		live, err := store.LiveByKey(ctx, tx, row.UniqueKey.String)
		if err != nil {
			return Event{}, err
		}
		if live != nil {
			return Event{}, &keyHeldError{id: row.ID, key: row.UniqueKey.String, live: live.ID}
		}
	}
	d := makeDue(row, OutcomeReplayed, 0, a.worker, now)
	return d.event, storeDecision(ctx, tx, &d)
}

// onEach runs act, in one write transaction, on the row of each of the
// jobs with the given IDs as it is then, and fires the events act returns
// after the commit (waking idle workers first if wake). A job that is
// gone, or that act refuses for its state (*stateError), is left alone.
// It returns how many jobs act acted on.
func (a *acts) onEach(ctx context.Context, ids []int64, wake bool, act func(tx store.Execer, row *store.JobRow, now time.Time) (Event, error)) (int, error) {
	var events []Event
	n := 0
	err := a.st.write(ctx, func(tx store.Execer) error {
		events, n = events[:0], 0
		now := a.clock.Now()
		for _, id := range ids {
			row, err := store.LockJob(ctx, tx, id)
			if errors.Is(err, store.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			ev, err := act(tx, row, now)
			if _, refused := errors.AsType[*stateError](err); refused {
				continue
			}
			if err != nil {
				return err
			}
			n++
			if ev.Type != "" {
				events = append(events, ev)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if wake && len(events) > 0 {
		a.wake.fire()
	}
	a.events.emit(events...)
	return n, nil
}
