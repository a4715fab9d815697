package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_ExpireAfter enqueues a due job and a delayed one with
// ExpireAfter and moves the clock to one millisecond before the expiry,
// where the job runs, or to the expiry, where it expires instead: with a
// history row of its own and job.expired, and no run.
func TestQueue_ExpireAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		delay time.Duration
		wait  time.Duration // after the enqueue
		runs  bool
	}{
		{"due, a millisecond before", 0, time.Minute - time.Millisecond, true},
		{"due, at the expiry", 0, time.Minute, false},
		{"due, long after", 0, 30 * 24 * time.Hour, false},
		{"delayed, a millisecond before", time.Hour, time.Hour + time.Minute - time.Millisecond, true},
		{"delayed, at the expiry", time.Hour, time.Hour + time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			var ev events
			q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
			q.Handle("timed", ok)
			job := enqueue(t, q, "timed", nil, litequeue.Delay(tt.delay), litequeue.ExpireAfter(time.Minute))
			if want := epoch.Add(tt.delay + time.Minute); !job.ExpiresAt.Equal(want) || !get(t, q, job.ID).ExpiresAt.Equal(want) {
				t.Fatalf("ExpiresAt = %v (Get: %v), want %v", job.ExpiresAt, get(t, q, job.ID).ExpiresAt, want)
			}
			clk.Add(tt.wait)
			runs := runDue(t, q)
			got := get(t, q, job.ID)
			if tt.runs {
				if runs != 1 || got.State != litequeue.Completed {
					t.Fatalf("%d runs, state %s; want 1 run, completed", runs, got.State)
				}
				if diff := cmp.Diff([]litequeue.Outcome{litequeue.OutcomeCompleted}, outcomes(history(t, q, job.ID))); diff != "" {
					t.Fatalf("history (-want +got):\n%s", diff)
				}
				return
			}
			if runs != 0 || got.State != litequeue.Expired || !got.FinishedAt.Equal(clk.Now()) {
				t.Fatalf("%d runs, job %+v; want no run, expired now", runs, got)
			}
			want := []litequeue.Attempt{{
				StartedAt: clk.Now(), FinishedAt: clk.Now(), Outcome: litequeue.OutcomeExpired,
				Error:  "not started by its expiry at " + job.ExpiresAt.UTC().Format(time.RFC3339Nano),
				Worker: history(t, q, job.ID)[0].Worker,
			}}
			if diff := cmp.Diff(want, history(t, q, job.ID)); diff != "" {
				t.Fatalf("history (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"job.enqueued", "job.expired"}, ev.types()); diff != "" {
				t.Fatalf("events (-want +got):\n%s", diff)
			}
			if e := ev.list[1]; e.Job.ID != job.ID || e.Job.State != litequeue.Expired || !e.At.Equal(clk.Now()) {
				t.Fatalf("job.expired = %+v, want job %d expired at %v", e, job.ID, clk.Now())
			}
			// Terminal: nothing brings it back.
			clk.Add(time.Hour)
			if n := runDue(t, q); n != 0 || get(t, q, job.ID).State != litequeue.Expired {
				t.Fatalf("later: %d runs, state %s; want none, expired", n, get(t, q, job.ID).State)
			}
		})
	}
}

// TestQueue_ExpireAfterRetry fails a job whose second retry would come
// after its expiry: the first retry runs, the second expires instead, not
// dead, with no job.dead and no death in Stats.
func TestQueue_ExpireAfterRetry(t *testing.T) {
	t.Parallel()
	clk := newMock()
	var ev events
	q, _ := openQueue(t, litequeue.Options{
		Clock: clk, OnEvent: ev.record,
		Retry: litequeue.Policy{Backoff: litequeue.Constant, Base: time.Minute, MaxTries: 5},
	})
	runs := 0
	q.Handle("flaky", func(ctx context.Context, job *litequeue.Job) error {
		runs++
		return errors.New("boom")
	})
	job := enqueue(t, q, "flaky", nil, litequeue.ExpireAfter(90*time.Second))
	for range 2 {
		runDue(t, q)
		clk.Add(time.Minute) // the retry is due: at 60s it runs, at 120s it is past the expiry
	}
	if n := runDue(t, q); n != 0 || runs != 2 {
		t.Fatalf("the retry after the expiry: %d runs in the last RunDue, %d in all; want 0, 2", n, runs)
	}
	got := get(t, q, job.ID)
	if got.State != litequeue.Expired || got.Attempt != 2 || got.LastError != "boom" {
		t.Fatalf("job %+v, want expired after 2 tries, its last error kept", got)
	}
	want := []litequeue.Outcome{litequeue.OutcomeFailed, litequeue.OutcomeFailed, litequeue.OutcomeExpired}
	if diff := cmp.Diff(want, outcomes(history(t, q, job.ID))); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	types := []string{"job.enqueued", "job.started", "job.retry", "job.started", "job.retry", "job.expired"}
	if diff := cmp.Diff(types, ev.types()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	st, err := q.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if qs := st.Queues[litequeue.DefaultQueue]; qs.Expired != 1 || qs.Dead != 0 || len(st.DeathsLastHour) != 0 {
		t.Fatalf("Stats: %+v, deaths %v; want one expired job, no death", qs, st.DeathsLastHour)
	}
}

// TestQueue_WithExpiry gives a kind an expiry: every enqueue of the kind
// gets it (Enqueue, EnqueueMany, EnqueueTx), ExpireAfter wins over it, and
// other kinds get none.
func TestQueue_WithExpiry(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("sms", ok, litequeue.WithExpiry(time.Minute))
	q.Handle("mail", ok)
	ctx := t.Context()
	kind := enqueue(t, q, "sms", nil)
	own := enqueue(t, q, "sms", nil, litequeue.ExpireAfter(time.Hour))
	many, err := q.EnqueueMany(ctx, "sms", []any{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	inTx, err := q.EnqueueTx(ctx, tx, "sms", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	other := enqueue(t, q, "mail", nil)
	want := map[int64]time.Time{
		kind.ID: epoch.Add(time.Minute), own.ID: epoch.Add(time.Hour),
		many[0].ID: epoch.Add(time.Minute), many[1].ID: epoch.Add(time.Minute), inTx.ID: epoch.Add(time.Minute),
		other.ID: {},
	}
	for id, at := range want {
		if got := get(t, q, id).ExpiresAt; !got.Equal(at) {
			t.Errorf("job %d: ExpiresAt %v, want %v", id, got, at)
		}
	}
	clk.Add(time.Minute)
	if n := runDue(t, q); n != 2 {
		t.Fatalf("%d runs, want 2: the job with its own expiry and the mail", n)
	}
	for id, state := range map[int64]litequeue.State{
		kind.ID: litequeue.Expired, many[0].ID: litequeue.Expired, many[1].ID: litequeue.Expired, inTx.ID: litequeue.Expired,
		own.ID: litequeue.Completed, other.ID: litequeue.Completed,
	} {
		if got := get(t, q, id).State; got != state {
			t.Errorf("job %d: %s, want %s", id, got, state)
		}
	}
}

// TestQueue_ExpireAfterRefused refuses an expiry that is not positive, or
// that cannot be stored, naming the value, and adds nothing; Handle panics
// on such a WithExpiry.
func TestQueue_ExpireAfterRefused(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()
	tests := []struct {
		name string
		opts []litequeue.EnqueueOption
		want string
	}{
		{"zero", []litequeue.EnqueueOption{litequeue.ExpireAfter(0)}, "ExpireAfter 0s must be positive"},
		{"negative", []litequeue.EnqueueOption{litequeue.ExpireAfter(-time.Second)}, "ExpireAfter -1s must be positive"},
		{"past the latest time", []litequeue.EnqueueOption{
			litequeue.At(time.UnixMilli(math.MaxInt64 - 1000)), litequeue.ExpireAfter(time.Hour),
		}, "ExpireAfter 1h0m0s makes the job expire after 292278994-08-17T07:12:55.807Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := q.Enqueue(ctx, "k", nil, tt.opts...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Enqueue: %v, want an error with %q", err, tt.want)
			}
			if _, err := q.EnqueueMany(ctx, "k", []any{1, 2}, tt.opts...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("EnqueueMany: %v, want an error with %q", err, tt.want)
			}
		})
	}
	if jobs, err := q.List(ctx, litequeue.Filter{}); err != nil || len(jobs) != 0 {
		t.Fatalf("List: %d jobs (%v), want none added", len(jobs), err)
	}
	for _, d := range []time.Duration{0, -time.Minute} {
		func() {
			defer func() {
				want := fmt.Sprintf(`litequeue: Handle("k"): WithExpiry %v must be positive`, d)
				if r := recover(); r != want {
					t.Errorf("Handle with WithExpiry(%v): panic %v, want %q", d, r, want)
				}
			}()
			q.Handle("k", ok, litequeue.WithExpiry(d))
		}()
	}
}

// TestQueue_ExpireByJanitor expires jobs of kinds that no worker handles,
// on a Queue that handles none and on one that handles another kind: the
// janitor's sweep of RunDue does it, and of Work within a minute.
func TestQueue_ExpireByJanitor(t *testing.T) {
	t.Parallel()
	t.Run("RunDue", func(t *testing.T) {
		t.Parallel()
		for _, handled := range []bool{false, true} {
			clk := newMock()
			var ev events
			q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
			if handled {
				q.Handle("other", ok)
			}
			job := enqueue(t, q, "nobody", nil, litequeue.ExpireAfter(time.Minute))
			clk.Add(time.Minute)
			runDue(t, q)
			if got := get(t, q, job.ID); got.State != litequeue.Expired {
				t.Fatalf("handled %v: state %s, want expired", handled, got.State)
			}
			if ev.count("job.expired") != 1 {
				t.Fatalf("handled %v: events %v, want one job.expired", handled, ev.types())
			}
			st, err := q.Stats(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if qs := st.Queues[litequeue.DefaultQueue]; qs.Expired != 1 || qs.Due != 0 || len(st.Unhandled) != 0 {
				t.Fatalf("handled %v: Stats %+v, unhandled %v; want one expired, none due", handled, qs, st.Unhandled)
			}
		}
	})
	t.Run("Work", func(t *testing.T) {
		t.Parallel()
		clk := newMock()
		var ev events
		q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
		q.Handle("other", ok)
		job := enqueue(t, q, "nobody", nil, litequeue.ExpireAfter(time.Minute))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- q.Work(ctx, litequeue.WorkerOptions{Concurrency: 1}) }()
		waitFor(t, "the job to expire", func() bool {
			clk.Add(10 * time.Second)
			return ev.count("job.expired") == 1
		})
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Work: %v", err)
		}
		if got := get(t, q, job.ID); got.State != litequeue.Expired || got.FinishedAt.Before(job.ExpiresAt) {
			t.Fatalf("job %+v, want expired at or after %v", got, job.ExpiresAt)
		}
	})
}

// TestQueue_ExpiredIsTerminal checks what the other calls make of an
// expired job: List finds it by state, Cancel refuses it naming its state,
// ReplayDead leaves it, Delete deletes it, and retention purges it after
// KeepFinished.
func TestQueue_ExpiredIsTerminal(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	ctx := t.Context()
	a := enqueue(t, q, "k", nil, litequeue.ExpireAfter(time.Second))
	b := enqueue(t, q, "k", nil, litequeue.ExpireAfter(time.Second))
	live := enqueue(t, q, "k", nil)
	clk.Add(time.Second)
	runDue(t, q)
	jobs, err := q.List(ctx, litequeue.Filter{State: litequeue.Expired})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != a.ID || jobs[1].ID != b.ID {
		t.Fatalf("List expired: %+v, want jobs %d and %d", jobs, a.ID, b.ID)
	}
	if err := q.Cancel(ctx, a.ID); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("Cancel of an expired job: %v, want an error naming its state", err)
	}
	if n, err := q.ReplayDead(ctx, litequeue.Filter{}); err != nil || n != 0 || get(t, q, a.ID).State != litequeue.Expired {
		t.Fatalf("ReplayDead: %d, %v; want 0 and the job left expired", n, err)
	}
	if err := q.Delete(ctx, a.ID); err != nil || exists(t, q, a.ID) {
		t.Fatalf("Delete of an expired job: %v (exists %v), want it gone", err, exists(t, q, a.ID))
	}
	clk.Add(litequeue.DefaultKeepFinished - time.Millisecond)
	runDue(t, q)
	if !exists(t, q, b.ID) {
		t.Fatal("the expired job was purged before KeepFinished")
	}
	clk.Add(time.Millisecond)
	runDue(t, q)
	if exists(t, q, b.ID) || historyRows(t, q, b.ID) != 0 {
		t.Fatal("the expired job and its history are kept past KeepFinished")
	}
	if got := get(t, q, live.ID); got.State != litequeue.Pending || !got.ExpiresAt.IsZero() {
		t.Fatalf("the job without an expiry: %+v, want pending, no ExpiresAt", got)
	}
}

// TestOpen_OldJobsNeverExpire migrates files of versions older than 5:
// their jobs have no expiry, and a pending one runs however late.
func TestOpen_OldJobsNeverExpire(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	t.Parallel()
	for _, version := range []int{1, 3} {
		t.Run(fmt.Sprintf("version %d", version), func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q := openAt(t, oldFile(t, version), litequeue.Options{Clock: clk})
			got := get(t, q, 4) // pending, due at 999999999 ms
			if !got.ExpiresAt.IsZero() || got.State != litequeue.Pending {
				t.Fatalf("job 4: %+v, want pending with no ExpiresAt", got)
			}
			q.Handle("later", ok)
			clk.Add(100 * 365 * 24 * time.Hour)
			if n := runDue(t, q); n != 1 || get(t, q, 4).State != litequeue.Completed {
				t.Fatalf("%d runs, job 4 %s; want it run and completed", n, get(t, q, 4).State)
			}
		})
	}
}

// TestQueue_ExpireAfterReplay replays a dead job whose expiry has passed:
// it is useless once late, so it expires at the next claim instead of
// running; replayed before its expiry, it runs.
func TestQueue_ExpireAfterReplay(t *testing.T) {
	t.Parallel()
	for _, late := range []bool{false, true} {
		clk := newMock()
		q, _ := openQueue(t, litequeue.Options{Clock: clk})
		runs := 0
		q.Handle("once", func(ctx context.Context, job *litequeue.Job) error {
			if runs++; runs == 1 {
				return litequeue.Permanent(errors.New("boom"))
			}
			return nil
		})
		job := enqueue(t, q, "once", nil, litequeue.ExpireAfter(time.Hour))
		runDue(t, q)
		if late {
			clk.Add(time.Hour)
		}
		if err := q.Replay(t.Context(), job.ID); err != nil {
			t.Fatal(err)
		}
		runDue(t, q)
		want, wantRuns := litequeue.Completed, 2
		if late {
			want, wantRuns = litequeue.Expired, 1
		}
		if got := get(t, q, job.ID).State; got != want || runs != wantRuns {
			t.Fatalf("replayed %s: %s after %d runs, want %s after %d", map[bool]string{false: "in time", true: "late"}[late], got, runs, want, wantRuns)
		}
	}
}

// TestQueue_ExpireAfterRowLocked: on PostgreSQL a claim expires the due
// jobs it can lock (SKIP LOCKED) before it waits for a capped kind's lock;
// a job whose row another claimer held then, and whose expiry has come,
// must not be claimed once that claimer lets go: the claim itself leaves
// expired jobs alone, on both backends.
func TestQueue_ExpireAfterRowLocked(t *testing.T) {
	t.Parallel()
	if !onPostgres {
		t.Skip("row locks and the kind's lock are PostgreSQL's: the file's writers take turns")
	}
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	ran := make(chan int64, 1)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { ran <- job.ID; return nil }, litequeue.MaxRunning(5))
	job := enqueue(t, q, "k", nil, litequeue.ExpireAfter(time.Minute))
	clk.Add(2 * time.Minute) // its expiry has come
	// Another claimer of the kind: it holds the kind's lock and the row, as
	// a claim that declined the row under its cap does until it commits.
	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.litequeue.kind'), hashtext('k'))`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT id FROM litequeue_jobs WHERE id = $1 FOR UPDATE`, job.ID); err != nil {
		t.Fatal(err)
	}
	res := runDueAsync(q)
	waitFor(t, "RunDue's claim to wait for the kind's lock", func() bool {
		var waiting int
		err := q.DB().GetContext(ctx, &waiting, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)
		return err == nil && waiting > 0
	})
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil {
		t.Fatal(r.err)
	}
	select {
	case id := <-ran:
		t.Errorf("job %d ran a minute after its expiry; state now %s", id, get(t, q, job.ID).State)
	default:
	}
	runDue(t, q) // the next claim expires it
	if got := get(t, q, job.ID).State; got != litequeue.Expired {
		t.Errorf("state %s, want expired", got)
	}
}
