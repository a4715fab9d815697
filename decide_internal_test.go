package litequeue

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/litequeue/litequeue/internal/store"
)

// TestDecide_Endings runs every way a run can end, on a try that is not the
// last and on the last, under each kind of policy, through decide, and
// checks what follows: the job's state, Attempt and RunAt, the history row
// and the event.
func TestDecide_Endings(t *testing.T) {
	t.Parallel()
	var (
		now     = time.UnixMilli(1_700_000_000_000)
		started = now.Add(-3 * time.Second)
		boom    = errors.New("boom")
	)
	type want struct {
		state   State
		used    bool // the run used a try: Attempt stays as claimed
		delay   time.Duration
		retry   bool // the delay is the claim's drawn wait (policy), not the case's
		outcome Outcome
		event   string // "": no event, and no history row
		failure bool   // the event carries the error
	}
	failed := func(o Outcome) [2]want { // a failed try: retried, or dead on the last
		return [2]want{
			{state: Pending, used: true, retry: true, outcome: o, event: eventRetry, failure: true},
			{state: Dead, used: true, outcome: o, event: eventDead, failure: true},
		}
	}
	both := func(w want) [2]want { return [2]want{w, w} }
	returned := func(err, cause error) end { return end{kind: endReturned, err: err, cause: cause} }
	tests := []struct {
		name      string
		end       end
		cancel    bool // Cancel asked the job to stop: the row as it is now says so
		completed bool // CompleteTx completed the job under this lease
		want      [2]want
	}{
		{name: "nil", end: returned(nil, nil),
			want: both(want{state: Completed, used: true, outcome: OutcomeCompleted, event: eventCompleted})},
		{name: "error", end: returned(boom, nil), want: failed(OutcomeFailed)},
		{name: "panic", end: returned(&panicError{value: "oops"}, nil), want: failed(OutcomePanicked)},
		{name: "timeout", end: end{kind: endTimedOut, timeout: time.Second}, want: failed(OutcomeTimedOut)},
		{name: "lease expired", end: end{kind: endExpired}, want: failed(OutcomeLeaseExpired)},
		{name: "lease lost", end: returned(boom, ErrLeaseLost), want: failed(OutcomeFailed)},
		{name: "RetryAfter", end: returned(RetryAfter(7*time.Second, boom), nil), want: [2]want{
			{state: Pending, used: true, delay: 7 * time.Second, outcome: OutcomeFailed, event: eventRetry, failure: true},
			{state: Dead, used: true, outcome: OutcomeFailed, event: eventDead, failure: true},
		}},
		{name: "Permanent", end: returned(Permanent(boom), nil),
			want: both(want{state: Dead, used: true, outcome: OutcomeFailed, event: eventDead, failure: true})},
		{name: "Snooze", end: returned(Snooze(5*time.Second), nil),
			want: both(want{state: Pending, delay: 5 * time.Second, outcome: OutcomeSnoozed, event: eventSnoozed})},
		{name: "ErrDiscard", end: returned(fmt.Errorf("gone: %w", ErrDiscard), nil),
			want: both(want{state: Discarded, used: true, outcome: OutcomeDiscarded, event: eventDiscarded})},
		{name: "CancelJob", end: returned(CancelJob(boom), nil),
			want: both(want{state: Cancelled, used: true, outcome: OutcomeCancelled, event: eventCancelled})},
		{name: "cancel requested", end: returned(boom, errCancelRequested),
			want: both(want{state: Cancelled, used: true, outcome: OutcomeCancelled, event: eventCancelled})},
		{name: "cancel before start", end: end{kind: endCancelled},
			want: both(want{state: Cancelled, used: true, outcome: OutcomeCancelled, event: eventCancelled})},
		{name: "cancelled row, nil", end: returned(nil, nil), cancel: true,
			want: both(want{state: Cancelled, used: true, outcome: OutcomeCancelled, event: eventCancelled})},
		{name: "cancelled row, lease expired", end: end{kind: endExpired}, cancel: true,
			want: both(want{state: Cancelled, used: true, outcome: OutcomeLeaseExpired, event: eventCancelled, failure: true})},
		{name: "shutdown release", end: returned(nil, errShutdown),
			want: both(want{state: Pending})},
		{name: "released before start", end: end{kind: endReleased},
			want: both(want{state: Pending})},
		{name: "after CompleteTx", end: returned(boom, nil), completed: true,
			want: both(want{state: Completed, used: true, outcome: OutcomeCompleted, event: eventCompleted})},
	}
	policies := []Policy{
		{Backoff: Exponential, Base: 2 * time.Second, Ceiling: time.Minute, MaxTries: 5, Jitter: FullJitter},
		{Backoff: Linear, Base: 3 * time.Second, Ceiling: time.Minute, MaxTries: 5, Jitter: EqualJitter},
		{Backoff: Constant, Base: 4 * time.Second, Ceiling: time.Minute, MaxTries: 5, Jitter: NoJitter},
	}
	for _, p := range policies {
		for _, tt := range tests {
			for i, last := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/last=%v", p.Backoff, tt.name, last), func(t *testing.T) {
					const attempt = 3
					retry := p.Delay(attempt, 0.5)
					cur := &store.JobRow{
						ID: 7, Kind: "k", State: string(Running), Attempt: attempt, MaxTries: p.MaxTries,
						RunAt: store.NullMS(started), CreatedAt: store.MS(started), LastError: "before",
						Token: 4, LeaseUntil: store.MS(now.Add(time.Minute)), StartedAt: store.MS(started),
						Worker: "w", RetryDelay: retry.Milliseconds(), Cancel: tt.cancel,
					}
					if last {
						cur.MaxTries = attempt
					}
					if tt.completed {
						cur.State, cur.RunAt, cur.LastError, cur.LeaseUntil = string(Completed), sql.NullInt64{}, "", 0
						cur.FinishedAt = store.NullMS(now.Add(-time.Second))
					}
					e := tt.end
					e.started, e.worker = started, "w"
					w := tt.want[i]
					if w.retry {
						w.delay = retry
					}
					d := decide(cur, e, now)
					checkDecision(t, cur, d, w.state, w.used, w.delay, w.outcome, w.event, w.failure, now)
					if got, want := d.keep, tt.completed; got != want {
						t.Errorf("keep %v, want %v", got, want)
					}
				})
			}
		}
	}
}

// checkDecision checks the decision d on a run of the job in row cur, at
// now, against what the test wants.
func checkDecision(t *testing.T, cur *store.JobRow, d decision, state State, used bool, delay time.Duration,
	outcome Outcome, event string, failure bool, now time.Time) {
	t.Helper()
	a := d.after
	attempt := cur.Attempt
	if !used {
		attempt--
	}
	if State(a.State) != state || a.Attempt != attempt {
		t.Errorf("after: %s attempt %d, want %s attempt %d", a.State, a.Attempt, state, attempt)
	}
	if !d.keep && (a.LeaseUntil != 0 || a.Cancel) {
		t.Errorf("after: lease_until %d, cancel %v; want no lease and no cancel", a.LeaseUntil, a.Cancel)
	}
	switch {
	case state == Pending:
		if want := store.NullMS(now.Add(delay)); a.RunAt != want {
			t.Errorf("RunAt %v, want %v", a.RunAt, want)
		}
	case state == Completed && !d.keep:
		if a.RunAt.Valid || a.LastError != "" {
			t.Errorf("completed with RunAt %v, LastError %q; want neither", a.RunAt, a.LastError)
		}
	}
	if state.terminal() && !d.keep && a.FinishedAt != store.NullMS(now) {
		t.Errorf("FinishedAt %v, want %v", a.FinishedAt, store.NullMS(now))
	}
	if event == "" {
		if d.history != nil || d.event.Type != "" {
			t.Fatalf("history %+v, event %q; want none: a release is not a run", d.history, d.event.Type)
		}
		return
	}
	h := d.history
	if h == nil {
		t.Fatal("no history row")
	}
	if Outcome(h.Outcome) != outcome || h.Delay != delay.Milliseconds() || State(h.Next) != state || h.Attempt != cur.Attempt ||
		h.JobID != cur.ID || h.Worker != "w" || h.FinishedAt != store.MS(now) {
		t.Errorf("history %+v, want outcome %s, delay %v, next state %s, attempt %d", *h, outcome, delay, state, cur.Attempt)
	}
	ev := d.event
	if ev.Type != event || ev.Delay != delay || ev.Job.State != state || !ev.At.Equal(now) {
		t.Errorf("event %s (delay %v, job %s), want %s (delay %v, job %s)", ev.Type, ev.Delay, ev.Job.State, event, delay, state)
	}
	if got := ev.Err != ""; got != failure {
		t.Errorf("event Err %q; want one: %v", ev.Err, failure)
	}
}

// TestDecide_Acts checks the decisions of the acts that are not runs:
// Cancel of a pending job, Replay, RunNow, CompleteTx and an expiry.
func TestDecide_Acts(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_700_000_000_000)
	cur := &store.JobRow{ID: 3, Kind: "k", State: string(Pending), Attempt: 2, MaxTries: 5, RunAt: store.NullMS(now.Add(time.Hour)), LastError: "boom"}
	tests := []struct {
		name    string
		d       decision
		state   State
		attempt int
		runAt   sql.NullInt64
		outcome Outcome // "": no history row
		event   string
	}{
		{"cancel", cancelPending(cur, now), Cancelled, 2, cur.RunAt, "", eventCancelled},
		{"replay", makeDue(cur, OutcomeReplayed, 0, "op", now), Pending, 0, store.NullMS(now), OutcomeReplayed, eventReplayed},
		{"run now", makeDue(cur, OutcomeRunNow, 2, "op", now), Pending, 2, store.NullMS(now), OutcomeRunNow, eventRunNow},
		{"CompleteTx", completeHeld(cur, now), Completed, 2, sql.NullInt64{}, "", ""},
		{"expire", expire(cur, "op", now), Expired, 2, cur.RunAt, OutcomeExpired, eventExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.d.after
			if State(a.State) != tt.state || a.Attempt != tt.attempt || a.RunAt != tt.runAt {
				t.Errorf("after: %s attempt %d RunAt %v, want %s attempt %d RunAt %v", a.State, a.Attempt, a.RunAt, tt.state, tt.attempt, tt.runAt)
			}
			if got, want := a.FinishedAt.Valid, tt.state.terminal(); got != want {
				t.Errorf("FinishedAt %v; want one: %v", a.FinishedAt, want)
			}
			switch h := tt.d.history; {
			case tt.outcome == "" && h != nil:
				t.Errorf("history %+v, want none", *h)
			case tt.outcome != "" && (h == nil || Outcome(h.Outcome) != tt.outcome || h.Attempt != tt.attempt || h.Worker != "op"):
				t.Errorf("history %+v, want outcome %s, attempt %d, worker op", h, tt.outcome, tt.attempt)
			}
			if got := tt.d.event.Type; got != tt.event {
				t.Errorf("event %q, want %q", got, tt.event)
			}
		})
	}
}

// TestDecide_Expire checks the decision for a pending job not started by
// its expiry, fresh, waiting to retry and snoozed: expired at now, its
// RunAt, tries and last error kept, one history row and job.expired.
func TestDecide_Expire(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_700_000_000_000)
	expiry := store.NullMS(now.Add(-time.Millisecond))
	tests := []struct {
		name string
		cur  store.JobRow
	}{
		{"fresh", store.JobRow{ID: 1, Kind: "k", State: string(Pending), MaxTries: 3, RunAt: store.NullMS(now.Add(-time.Hour)), ExpiresAt: expiry}},
		{"waiting to retry", store.JobRow{ID: 2, Kind: "k", State: string(Pending), Attempt: 2, MaxTries: 3,
			RunAt: store.NullMS(now.Add(time.Hour)), LastError: "boom", ExpiresAt: expiry}},
		{"snoozed", store.JobRow{ID: 3, Kind: "k", State: string(Pending), Attempt: 1, MaxTries: 3, RunAt: store.NullMS(now), ExpiresAt: store.NullMS(now)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := expire(&tt.cur, "w", now)
			want := tt.cur
			want.State, want.FinishedAt = string(Expired), store.NullMS(now)
			if diff := cmp.Diff(want, d.after); diff != "" {
				t.Errorf("after (-want +got):\n%s", diff)
			}
			wantH := store.HistoryRow{
				AttemptRow: store.AttemptRow{Attempt: tt.cur.Attempt, StartedAt: store.MS(now), FinishedAt: store.MS(now), Outcome: string(OutcomeExpired),
					Error: "not started by its expiry at " + store.FromMS(tt.cur.ExpiresAt.Int64).UTC().Format(time.RFC3339Nano), Worker: "w"},
				JobID: tt.cur.ID, Kind: "k", Next: string(Expired),
			}
			if diff := cmp.Diff(&wantH, d.history, cmp.AllowUnexported(store.HistoryRow{})); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
			if d.event.Type != eventExpired || d.event.Job.State != Expired || d.event.Job.ID != tt.cur.ID || !d.event.At.Equal(now) {
				t.Errorf("event = %+v, want job.expired of job %d, expired, at %v", d.event, tt.cur.ID, now)
			}
			if d.keep {
				t.Error("keep set: the row would not be written")
			}
		})
	}
}
