package litequeue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Claims: a worker takes due jobs of the kinds it handles by leasing them
// (see lease), in priority, then RunAt, then ID order.

// claim leases up to limit due jobs of the kinds this Queue handles, from
// the claimer's queues, in priority, then RunAt, then ID order, and fires
// job.started for each after the commit.
func (rn *runner) claim(ctx context.Context, c claimer, limit int) ([]*lease, error) {
	var leases []*lease
	var expired []Event
	var now time.Time
	err := rn.st.submit(&store.Op[*runNote]{Ctx: ctx, Light: true, Fn: func(tx store.Execer) (err error) {
		now = rn.now()
		leases, expired, err = rn.claimTx(ctx, tx, c, limit, now)
		return err
	}})
	if err != nil {
		return nil, err
	}
	rn.hold(leases...)
	rn.events.emit(expired...)
	rn.started(now, leases...)
	return leases, nil
}

// Claim is the settle's step that claims the next jobs the workers of a
// writer batch's run ends ask for (see runNote), in tx: for each claimer,
// one claim for as many jobs as it has asks, handed out in the ends'
// order; an ask left without one gets none. The workers that finish
// together share one claim, as they share one commit.
func (rn *runner) Claim(ctx context.Context, tx store.Execer, ends []*store.RunEnd[*runNote]) error {
	now := rn.now()
	var claimers []*claimer
	byClaimer := make(map[*claimer][]*runNote)
	for _, e := range ends {
		n := e.Note
		n.chained, n.at, n.expired = nil, now, nil
		if n.next == nil {
			continue
		}
		if _, ok := byClaimer[n.next]; !ok {
			claimers = append(claimers, n.next)
		}
		byClaimer[n.next] = append(byClaimer[n.next], n)
	}
	for _, c := range claimers {
		same := byClaimer[c]
		leases, expired, err := rn.claimTx(ctx, tx, *c, len(same), now)
		if errors.As(err, new(*ClockSkewError)) {
			return nil // no claim, not a failed write: the claimer's loop claims again, and reports it
		}
		if err != nil {
			return err
		}
		same[0].expired = expired
		for i, l := range leases {
			same[i].chained = l
		}
	}
	return nil
}

// beforeClaim does in tx what comes before a claim at now (see
// store.BeforeClaim): it expires the pending jobs whose expiry has come, as
// worker, counting them in the throughput, and returns their events, and
// whether anything is paused, for the gate.
func (rn *runner) beforeClaim(ctx context.Context, tx store.Execer, worker string, now time.Time) ([]Event, bool, error) {
	expiring, paused, err := store.BeforeClaim(ctx, tx, store.MS(now))
	if err != nil {
		return nil, false, fmt.Errorf("look for expiries and pauses: %w", err)
	}
	if !expiring {
		return nil, paused, nil
	}
	expired, err := rn.expireDue(ctx, tx, worker, now)
	if err == nil {
		err = rn.st.countEnd(ctx, tx, now, store.EndExpired, len(expired))
	}
	return expired, paused, err
}

// claimTx leases up to limit due jobs in tx at time now, of the kinds and
// queues the gate lets through (see gate.go), and no more of a kind than
// its cap: when a cap runs out, the claim looks again without that kind, so
// that free workers take other kinds meanwhile. It first expires the
// pending jobs whose expiry has come (see expire.go), whose events it
// returns, to fire after the commit.
func (rn *runner) claimTx(ctx context.Context, tx store.Execer, c claimer, limit int, now time.Time) ([]*lease, []Event, error) {
	kinds := rn.reg.kinds()
	if len(kinds) == 0 || limit <= 0 {
		return nil, nil, nil
	}
	if err := rn.skew.check(ctx, tx); err != nil {
		return nil, nil, err
	}
	expired, paused, err := rn.beforeClaim(ctx, tx, c.worker, now)
	if err != nil {
		return nil, nil, err
	}
	g, err := rn.gate.admit(ctx, tx, kinds, now, true, paused)
	if err != nil {
		return nil, nil, err
	}
	var leases []*lease
	for len(leases) < limit && len(g.kinds) > 0 {
		capped := false
		cq := store.ClaimQuery{Kinds: g.kinds, Queues: c.queues, Paused: g.paused, Limit: limit - len(leases), Now: now}
		claimed := len(leases)
		saved, err := rn.st.eng.Claim(ctx, tx, cq, func(row *store.JobRow) bool {
			if !g.take(row.Kind) {
				capped = true
				return false
			}
			leases = append(leases, rn.lease(row, c.worker, now))
			return true
		})
		if err != nil {
			return nil, nil, err
		}
		rn.openCheckpoints(leases[claimed:], saved)
		if !capped || !g.spent() {
			break
		}
	}
	if err := rn.gate.claimed(ctx, tx, g, leases, now); err != nil {
		return nil, nil, err
	}
	return leases, expired, nil
}

// lease turns one claimed pending row into a running one under a new
// token, and returns the lease with the row as it is once claimTx has
// written it.
func (rn *runner) lease(row *store.JobRow, worker string, now time.Time) *lease {
	h := rn.reg.get(row.Kind)
	delay := h.policy.Delay(row.Attempt+1, rn.draws.draw())
	if row.OwnMaxTries == 0 {
		row.MaxTries = h.policy.MaxTries
	}
	row.State, row.Attempt, row.Token, row.Cancel = string(Running), row.Attempt+1, row.Token+1, false
	row.LeaseUntil, row.StartedAt = store.MS(now.Add(rn.visibility)), store.MS(now)
	row.Worker, row.RetryDelay = worker, delay.Milliseconds()
	l := &lease{row: *row, job: jobOf(row), h: h, started: now, worker: worker, renewNow: make(chan struct{}, 1)}
	l.unopened = rn.seal.openJob(l.job)
	return l
}
