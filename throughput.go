package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Throughput: every end of a run or a job — completed, retried, dead,
// discarded, cancelled, expired — is counted per minute in the transaction
// that stores it (see internal/store/throughput.go): the settle of a batch of run
// ends, a rescue, an expiry, a cancel (see storage.countEnds). The
// janitor deletes the counts older than keepThroughput.

// MaxThroughputWindow is the longest window [Queue.Throughput] reads: the
// counts of a minute are kept for 25 hours.
const MaxThroughputWindow = 24 * time.Hour

// ThroughputPoint counts the ends of runs and jobs in one span of time, a
// point of [Queue.Throughput].
type ThroughputPoint struct {
	Start     time.Time // the start of the span, on the injected clock
	Completed int       // runs that completed
	Retried   int       // failed runs after which the job waits to run again
	Dead      int       // jobs that went dead: a last try failed, a Permanent error, a last lease expired
	Discarded int       // runs that discarded their job ([ErrDiscard])
	Cancelled int       // jobs cancelled, running or not
	Expired   int       // jobs that expired before they started
}

// Throughput returns the ends of runs and jobs of the last window, per
// span of step, oldest first: window/step points, every span present,
// zeros too, the last one the span that now (on the injected clock) is in,
// so its counts are of the part of it that has passed. Spans are aligned
// on Unix time: with a step of an hour they start on the hour. step is a
// whole number of minutes; window a whole number of steps, up to
// [MaxThroughputWindow]. For a chart: Throughput(ctx, time.Hour,
// time.Minute) for the last hour per minute, Throughput(ctx, 24*time.Hour,
// time.Hour) for the last day per hour.
//
// The counts are read from a table that every Queue of this version adds
// to as it stores each end, in the same transaction, and not from the
// jobs' history, which retention purges: a few rows a minute, whatever the
// number of jobs. A run counts when its end is stored: a run that lost its
// lease counts nothing, the rescue of its job counts the lease_expired
// failure, and a run completed with [Queue.CompleteTx] counts when its
// handler returns. On a file opened with [OpenReadOnly] that no Queue of
// this version has opened for writing, which has no counts, every point
// is zero.
func (q *Queue) Throughput(ctx context.Context, window, step time.Duration) ([]ThroughputPoint, error) {
	if err := checkThroughputSpans(window, step); err != nil {
		return nil, err
	}
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	stepMS := step.Milliseconds()
	now := store.MS(q.now())
	end := now - now%stepMS + stepMS // the end of the span now is in
	n := int(window / step)
	points := make([]ThroughputPoint, n)
	for i := range points {
		points[i].Start = store.FromMS(end - int64(n-i)*stepMS)
	}
	if !q.st.info.Recorded {
		return points, nil // a file opened read-only that no binary of this version has opened
	}
	rows, err := store.Throughput(ctx, q.st.reads, end-int64(n)*stepMS, end, stepMS)
	if err != nil {
		return nil, fmt.Errorf("litequeue: throughput: %w", err)
	}
	for _, r := range rows {
		if i := int((r.Start - (end - int64(n)*stepMS)) / stepMS); i >= 0 && i < n {
			points[i].add(r.Outcome, r.N)
		}
	}
	return points, nil
}

// checkThroughputSpans checks the window and step of a Throughput call.
func checkThroughputSpans(window, step time.Duration) error {
	switch {
	case step < time.Minute || step%time.Minute != 0:
		return fmt.Errorf("litequeue: throughput: step %v is not a whole number of minutes, at least 1m", step)
	case window > MaxThroughputWindow:
		return fmt.Errorf("litequeue: throughput: window %v is over the limit of %v", window, MaxThroughputWindow)
	case window < step || window%step != 0:
		return fmt.Errorf("litequeue: throughput: window %v is not a whole number of steps of %v, at least one", window, step)
	}
	return nil
}

// add adds n ends of the outcome that litequeue_throughput names end.
func (p *ThroughputPoint) add(end string, n int) {
	switch end {
	case store.EndCompleted:
		p.Completed += n
	case store.EndRetried:
		p.Retried += n
	case store.EndDead:
		p.Dead += n
	case store.EndDiscarded:
		p.Discarded += n
	case store.EndCancelled:
		p.Cancelled += n
	case store.EndExpired:
		p.Expired += n
	}
}
