package litequeue

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Claims: a worker takes due jobs of the kinds it handles by leasing them
// (see lease), in priority, then RunAt, then ID order.

// claimer says which jobs a worker takes, and the name it records.
type claimer struct {
	queues []string // nil: every queue
	worker string
}

// claim leases up to limit due jobs of the kinds this Queue handles, from
// the claimer's queues, in priority, then RunAt, then ID order, and fires
// job.started for each after the commit.
func (q *Queue) claim(ctx context.Context, c claimer, limit int) ([]*lease, error) {
	var leases []*lease
	var expired []Event
	var now time.Time
	err := q.submit(&writeOp{ctx: ctx, light: true, fn: func(tx execer) (err error) {
		now = q.now()
		leases, expired, err = q.claimTx(ctx, tx, c, limit, now)
		return err
	}})
	if err != nil {
		return nil, err
	}
	q.hold(leases...)
	q.emit(expired...)
	q.emitStarted(now, leases...)
	return leases, nil
}

// A claimAsk asks for one job for a claimer, to be claimed in the
// transaction of the write it comes with (a finished run's, see finish).
// The writer serves all the asks of a batch at once (see serve): the
// workers that finish together share one claim, as they share one commit.
type claimAsk struct {
	c       *claimer
	got     *lease    // the job claimed, if one was due
	at      time.Time // when it was claimed
	expired []Event   // of the jobs the claim expired first (see expireDue)
}

// serveClaims claims the jobs the asks of a writer batch want, in tx at
// time now: for each claimer, one claim for as many jobs as it has asks,
// handed out in the asks' order; an ask left without one gets nil.
func (q *Queue) serveClaims(ctx context.Context, tx execer, asks []*claimAsk, now time.Time) error {
	var claimers []*claimer
	byClaimer := make(map[*claimer][]*claimAsk)
	for _, a := range asks {
		a.got, a.at, a.expired = nil, now, nil
		if _, ok := byClaimer[a.c]; !ok {
			claimers = append(claimers, a.c)
		}
		byClaimer[a.c] = append(byClaimer[a.c], a)
	}
	for _, c := range claimers {
		same := byClaimer[c]
		leases, expired, err := q.claimTx(ctx, tx, *c, len(same), now)
		if errors.As(err, new(*ClockSkewError)) {
			return nil // no claim, not a failed write: the claimer's loop claims again, and reports it
		}
		if err != nil {
			return err
		}
		same[0].expired = expired
		for i, l := range leases {
			same[i].got = l
		}
	}
	return nil
}

// claimFirstSQL tells what a claim has to do before it claims, both
// nearly always nothing: expire the pending jobs whose expiry has come, and
// read the pauses. One statement costs the claim less than the two it
// saves.
const claimFirstSQL = `SELECT EXISTS (` + anyExpirySQL + `) AS expiring, ` + anyPausedSQL + ` AS paused`

// beforeClaim does in tx what comes before a claim at now (see
// claimFirstSQL): it expires the pending jobs whose expiry has come, as
// worker, and returns their events, and whether anything is paused, for
// the gate.
func (q *Queue) beforeClaim(ctx context.Context, tx execer, worker string, now time.Time) ([]Event, bool, error) {
	var first struct {
		Expiring bool `db:"expiring"`
		Paused   bool `db:"paused"`
	}
	if err := tx.GetContext(ctx, &first, claimFirstSQL, ms(now)); err != nil {
		return nil, false, fmt.Errorf("look for expiries and pauses: %w", err)
	}
	if !first.Expiring {
		return nil, first.Paused, nil
	}
	expired, err := q.expireDue(ctx, tx, worker, now)
	return expired, first.Paused, err
}

// claimTx leases up to limit due jobs in tx at time now, of the kinds and
// queues the gate lets through (see gate.go), and no more of a kind than
// its cap: when a cap runs out, the claim looks again without that kind, so
// that free workers take other kinds meanwhile. It first expires the
// pending jobs whose expiry has come (see expire.go), whose events it
// returns, to fire after the commit.
func (q *Queue) claimTx(ctx context.Context, tx execer, c claimer, limit int, now time.Time) ([]*lease, []Event, error) {
	kinds := q.kinds()
	if len(kinds) == 0 || limit <= 0 {
		return nil, nil, nil
	}
	if err := q.skew.check(ctx, tx); err != nil {
		return nil, nil, err
	}
	expired, paused, err := q.beforeClaim(ctx, tx, c.worker, now)
	if err != nil {
		return nil, nil, err
	}
	g, err := q.gate(ctx, tx, kinds, now, true, paused)
	if err != nil {
		return nil, nil, err
	}
	var leases []*lease
	for len(leases) < limit && len(g.kinds) > 0 {
		capped := false
		cq := claimQuery{kinds: g.kinds, queues: c.queues, paused: g.paused, limit: limit - len(leases), now: now}
		err := q.eng.claim(ctx, tx, cq, func(row *jobRow) bool {
			if !g.take(row.Kind) {
				capped = true
				return false
			}
			leases = append(leases, q.lease(row, c.worker, now))
			return true
		})
		if err != nil {
			return nil, nil, err
		}
		if !capped || !g.spent() {
			break
		}
	}
	if err := q.gated(ctx, tx, g, leases, now); err != nil {
		return nil, nil, err
	}
	return leases, expired, nil
}

// lease turns one claimed pending row into a running one under a new
// token, and returns the lease with the row as it is once claimTx has
// written it.
func (q *Queue) lease(row *jobRow, worker string, now time.Time) *lease {
	h := q.handler(row.Kind)
	delay := h.policy.Delay(row.Attempt+1, q.rand())
	if row.OwnMaxTries == 0 {
		row.MaxTries = h.policy.MaxTries
	}
	row.State, row.Attempt, row.Token, row.Cancel = Running, row.Attempt+1, row.Token+1, false
	row.LeaseUntil, row.StartedAt = ms(now.Add(q.opts.VisibilityTimeout)), ms(now)
	row.Worker, row.RetryDelay = worker, delay.Milliseconds()
	return &lease{row: *row, job: row.job(), h: h, started: now, worker: worker, renewNow: make(chan struct{}, 1)}
}
