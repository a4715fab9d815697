package litequeue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// setMetadata is an enqueue middleware that sets the key of each job's
// metadata to value.
func setMetadata(key, value string) func(litequeue.Enqueuer) litequeue.Enqueuer {
	return func(next litequeue.Enqueuer) litequeue.Enqueuer {
		return func(ctx context.Context, job *litequeue.NewJob) error {
			job.Metadata[key] = value
			return next(ctx, job)
		}
	}
}

// errNoTenant is the refusal of requireTenant.
var errNoTenant = errors.New("no tenant")

// requireTenant is an enqueue middleware that refuses a job whose
// payload, a JSON string, is "no tenant".
func requireTenant(next litequeue.Enqueuer) litequeue.Enqueuer {
	return func(ctx context.Context, job *litequeue.NewJob) error {
		if string(job.Payload) == `"no tenant"` {
			return fmt.Errorf("payload %s: %w", job.Payload, errNoTenant)
		}
		return next(ctx, job)
	}
}

// seenJobs records the jobs an enqueue middleware saw.
type seenJobs struct {
	mu   sync.Mutex
	jobs []litequeue.NewJob
}

func (s *seenJobs) mw(next litequeue.Enqueuer) litequeue.Enqueuer {
	return func(ctx context.Context, job *litequeue.NewJob) error {
		s.mu.Lock()
		s.jobs = append(s.jobs, *job)
		s.mu.Unlock()
		return next(ctx, job)
	}
}

func (s *seenJobs) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.jobs)
}

// TestQueue_UseEnqueueMetadata adds metadata in middleware, one value per
// job of a batch: Enqueue, EnqueueMany and EnqueueTx return it, the file
// or server stores it, and the handler sees it; the caller's metadata
// stays beside it.
func TestQueue_UseEnqueueMetadata(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	n := 0
	q.UseEnqueue(func(next litequeue.Enqueuer) litequeue.Enqueuer {
		return func(ctx context.Context, job *litequeue.NewJob) error {
			n++
			job.Metadata["n"] = fmt.Sprint(n)
			return next(ctx, job)
		}
	})
	ran := map[string]string{}
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		ran[job.Metadata["n"]] = job.Metadata["caller"]
		return nil
	})
	ctx := t.Context()
	one := enqueue(t, q, "k", nil, litequeue.Metadata("caller", "a"))
	many, err := q.EnqueueMany(ctx, "k", []any{1, 2, 3, 4}, litequeue.Metadata("caller", "b"))
	if err != nil {
		t.Fatal(err)
	}
	var inTx *litequeue.Job
	err = q.WriteTx(ctx, func(tx *sqlx.Tx) (err error) {
		inTx, err = q.EnqueueTx(ctx, tx, "k", nil, litequeue.Metadata("caller", "c"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]map[string]string{
		one.ID: {"caller": "a", "n": "1"}, many[0].ID: {"caller": "b", "n": "2"}, many[1].ID: {"caller": "b", "n": "3"},
		many[2].ID: {"caller": "b", "n": "4"}, many[3].ID: {"caller": "b", "n": "5"}, inTx.ID: {"caller": "c", "n": "6"},
	}
	for _, j := range append([]*litequeue.Job{one, inTx}, many...) {
		if diff := cmp.Diff(want[j.ID], j.Metadata); diff != "" {
			t.Errorf("job %d as returned: metadata (-want +got):\n%s", j.ID, diff)
		}
		if diff := cmp.Diff(want[j.ID], get(t, q, j.ID).Metadata); diff != "" {
			t.Errorf("job %d as stored: metadata (-want +got):\n%s", j.ID, diff)
		}
	}
	if got := ids(many); got[0] <= one.ID || got[1] != got[0]+1 || got[3] != got[0]+3 {
		t.Errorf("EnqueueMany's IDs %v after %d, want consecutive in the payloads' order", got, one.ID)
	}
	runDue(t, q)
	wantRan := map[string]string{"1": "a", "2": "b", "3": "b", "4": "b", "5": "b", "6": "c"}
	if diff := cmp.Diff(wantRan, ran); diff != "" {
		t.Errorf("caller by n, as the handler saw them (-want +got):\n%s", diff)
	}
}

// TestQueue_UseEnqueuePayload transforms the payload in middleware: the
// transformed bytes are stored, returned and handed to the handler.
func TestQueue_UseEnqueuePayload(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.UseEnqueue(func(next litequeue.Enqueuer) litequeue.Enqueuer {
		return func(ctx context.Context, job *litequeue.NewJob) error {
			job.Payload = bytes.ToUpper(job.Payload)
			return next(ctx, job)
		}
	})
	var got []string
	q.Handle("shout", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, s string) error {
		got = append(got, s)
		return nil
	}))
	job := enqueue(t, q, "shout", "hello")
	if _, err := q.EnqueueMany(t.Context(), "shout", []any{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if string(job.Payload) != `"HELLO"` || string(get(t, q, job.ID).Payload) != `"HELLO"` {
		t.Errorf("payload returned %s, stored %s; want \"HELLO\"", job.Payload, get(t, q, job.ID).Payload)
	}
	runDue(t, q)
	if diff := cmp.Diff([]string{"HELLO", "A", "B"}, got); diff != "" {
		t.Errorf("payloads the handler got (-want +got):\n%s", diff)
	}
}

// TestQueue_UseEnqueueRefuses refuses jobs in middleware: Enqueue,
// EnqueueTx and EnqueueMany return the error, and nothing is stored, of
// a batch no job, though the others would have been admitted.
func TestQueue_UseEnqueueRefuses(t *testing.T) {
	t.Parallel()
	var ev events
	q, _ := openQueue(t, litequeue.Options{OnEvent: ev.record, EnqueueMiddleware: []func(litequeue.Enqueuer) litequeue.Enqueuer{requireTenant}})
	ctx := t.Context()
	_, err := q.Enqueue(ctx, "k", "no tenant")
	if !errors.Is(err, errNoTenant) || err.Error() != `litequeue: enqueue k: payload "no tenant": no tenant` {
		t.Errorf("Enqueue: %v, want the middleware's error wrapped", err)
	}
	_, err = q.EnqueueMany(ctx, "k", []any{"t1", "t2", "no tenant", "t3"})
	if !errors.Is(err, errNoTenant) || !strings.Contains(err.Error(), "payload 2 of 4") {
		t.Errorf("EnqueueMany: %v, want the middleware's error, naming payload 2 of 4", err)
	}
	err = q.WriteTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := q.EnqueueTx(ctx, tx, "k", "ok"); err != nil {
			return err
		}
		_, err := q.EnqueueTx(ctx, tx, "k", "no tenant")
		if !errors.Is(err, errNoTenant) {
			t.Errorf("EnqueueTx: %v, want the middleware's error", err)
		}
		return nil // commits the admitted job alone
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := q.List(ctx, litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || string(jobs[0].Payload) != `"ok"` || ev.count("job.enqueued") != 0 {
		t.Errorf("stored %d jobs, %d job.enqueued events; want the admitted job of EnqueueTx alone", len(jobs), ev.count("job.enqueued"))
	}
}

// TestQueue_UseEnqueueOrder: the middleware of Options wraps that of
// UseEnqueue, each in the order given, the first outermost; a job that a
// middleware does not pass on is refused.
func TestQueue_UseEnqueueOrder(t *testing.T) {
	t.Parallel()
	var order []string
	trace := func(name string) func(litequeue.Enqueuer) litequeue.Enqueuer {
		return func(next litequeue.Enqueuer) litequeue.Enqueuer {
			return func(ctx context.Context, job *litequeue.NewJob) error {
				order = append(order, name+" in")
				job.Metadata["last"] = name
				err := next(ctx, job)
				order = append(order, name+" out")
				return err
			}
		}
	}
	q, _ := openQueue(t, litequeue.Options{EnqueueMiddleware: []func(litequeue.Enqueuer) litequeue.Enqueuer{trace("a"), trace("b")}})
	q.UseEnqueue(trace("c"))
	q.UseEnqueue(trace("d"))
	job := enqueue(t, q, "k", nil)
	want := []string{"a in", "b in", "c in", "d in", "d out", "c out", "b out", "a out"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if got := job.Metadata["last"]; got != "d" {
		t.Errorf("last %q, want d: the innermost sets it last", got)
	}
	q.UseEnqueue(func(litequeue.Enqueuer) litequeue.Enqueuer {
		return func(context.Context, *litequeue.NewJob) error { return nil }
	})
	if _, err := q.Enqueue(t.Context(), "k", nil); err == nil || !strings.Contains(err.Error(), "without passing the job on") {
		t.Errorf("Enqueue through a middleware that drops the job: %v, want a refusal", err)
	}
	if got := list(t, q, litequeue.Filter{}); len(got) != 1 {
		t.Errorf("jobs %v, want the first alone", got)
	}
}

// TestQueue_UseEnqueueSees: a middleware sees the job's kind, queue and
// options; a typed kind's jobs pass through it too.
func TestQueue_UseEnqueueSees(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: litequeue.Policy{MaxTries: 4}})
	var seen seenJobs
	q.UseEnqueue(seen.mw)
	welcome := litequeue.NewKind[Email]("email.welcome")
	if _, err := welcome.Enqueue(t.Context(), q, Email{To: "ada@example.com"}, litequeue.OnQueue("mail"), litequeue.Delay(time.Minute),
		litequeue.Priority(2), litequeue.UniqueKey("ada"), litequeue.ExpireAfter(time.Hour), litequeue.Metadata("m", "v")); err != nil {
		t.Fatal(err)
	}
	enqueue(t, q, "k", []byte("raw"), litequeue.MaxTries(9), litequeue.At(epoch.Add(time.Hour)))
	type view struct {
		Kind, Queue, UniqueKey, Payload string
		RunAt                           time.Time
		Priority, MaxTries              int
		ExpireAfter                     time.Duration
		Metadata                        map[string]string
	}
	var got []view
	for _, j := range seen.jobs {
		got = append(got, view{j.Kind(), j.Queue(), j.UniqueKey(), string(j.Payload), j.RunAt(), j.Priority(), j.MaxTries(), j.ExpireAfter(), j.Metadata})
	}
	want := []view{
		{"email.welcome", "mail", "ada", `{"to":"ada@example.com","name":""}`, epoch.Add(time.Minute), 2, 4, time.Hour, map[string]string{"m": "v"}},
		{"k", "default", "", "raw", epoch.Add(time.Hour), 0, 9, 0, map[string]string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs the middleware saw (-want +got):\n%s", diff)
	}
}

// TestQueue_UseEnqueueLimits holds what a middleware leaves to the limits
// of Enqueue's own, naming the middleware's value: nothing is stored.
func TestQueue_UseEnqueueLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		mw   func(litequeue.Enqueuer) litequeue.Enqueuer
		want string
	}{
		{"key not UTF-8", setMetadata("bad\xff", "v"), `litequeue: enqueue k: as the enqueue middleware left it, metadata key "bad\xff" is not valid UTF-8`},
		{"empty key", setMetadata("", "v"), `litequeue: enqueue k: as the enqueue middleware left it, metadata with an empty key (value "v")`},
		{"too large", setMetadata("big", strings.Repeat("x", litequeue.MetadataSizeLimit)),
			`litequeue: enqueue k: as the enqueue middleware left it, metadata of 4099 bytes is over the limit of 4096 bytes`},
		{"payload", func(next litequeue.Enqueuer) litequeue.Enqueuer {
			return func(ctx context.Context, job *litequeue.NewJob) error {
				job.Payload = append(job.Payload, make([]byte, 100)...)
				return next(ctx, job)
			}
		}, `litequeue: enqueue k: as the enqueue middleware left it, payload of 105 bytes is over the limit of 100 bytes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			q, _ := openQueue(t, litequeue.Options{MaxPayload: 100})
			q.UseEnqueue(c.mw)
			_, err := q.Enqueue(t.Context(), "k", "abc")
			if err == nil || err.Error() != c.want {
				t.Errorf("Enqueue: %v\nwant %s", err, c.want)
			}
			if got := list(t, q, litequeue.Filter{}); len(got) != 0 {
				t.Errorf("jobs %v stored, want none", got)
			}
		})
	}
}

// TestQueue_UseEnqueuePeriodic: the job of each periodic slot passes
// through the middleware, a refused slot is an error of RunDue and is
// fired once admitted; Replay, which runs a job again, does not pass
// through it.
func TestQueue_UseEnqueuePeriodic(t *testing.T) {
	t.Parallel()
	clk := newMock() // 12:00
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	var seen seenJobs
	var refuse bool
	q.UseEnqueue(seen.mw, func(next litequeue.Enqueuer) litequeue.Enqueuer {
		return func(ctx context.Context, job *litequeue.NewJob) error {
			if refuse {
				return errNoTenant
			}
			job.Metadata["via"] = "mw"
			return next(ctx, job)
		}
	})
	ran := 0
	q.Handle("tick", func(ctx context.Context, job *litequeue.Job) error {
		ran++
		if ran == 1 {
			return litequeue.Permanent(errors.New("first run fails"))
		}
		return nil
	})
	register(t, q, "hourly", "0 * * * *", "tick")
	if seen.count() != 0 {
		t.Fatalf("registering passed %d jobs through the middleware, want none", seen.count())
	}
	clk.Add(time.Hour)
	refuse = true
	if _, err := q.RunDue(t.Context()); !errors.Is(err, errNoTenant) {
		t.Fatalf("RunDue with the slot refused: %v, want the middleware's error", err)
	}
	refuse = false
	runDue(t, q)
	jobs := periodicJobs(t, q, "tick")
	job := jobs[epoch.Add(time.Hour)]
	if len(jobs) != 1 || job == nil || job.Metadata["via"] != "mw" || job.State != litequeue.Dead {
		t.Fatalf("jobs %+v, want the 13:00 slot's, dead, with the middleware's metadata", jobs)
	}
	if err := q.Replay(t.Context(), job.ID); err != nil {
		t.Fatal(err)
	}
	runDue(t, q)
	if got := get(t, q, job.ID); got.State != litequeue.Completed || seen.count() != 2 {
		t.Errorf("after Replay: %s, the middleware saw %d jobs; want completed, 2 (the refused slot and its fire)", got.State, seen.count())
	}
}

// TestQueue_UseEnqueueRunNow: RunNow makes a job that exists due, and
// does not pass it through the middleware again; a duplicate of a unique
// key passes through it, and returns the live job.
func TestQueue_UseEnqueueRunNow(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	var seen seenJobs
	q.UseEnqueue(seen.mw, setMetadata("via", "mw"))
	job := enqueue(t, q, "k", nil, litequeue.Delay(time.Hour), litequeue.UniqueKey("once"))
	if err := q.RunNow(t.Context(), job.ID); err != nil {
		t.Fatal(err)
	}
	dup := enqueue(t, q, "k", nil, litequeue.UniqueKey("once"))
	if got := get(t, q, job.ID); seen.count() != 2 || !dup.Duplicate || dup.ID != job.ID || got.Metadata["via"] != "mw" {
		t.Errorf("middleware saw %d jobs, duplicate %v of job %d, metadata %v; want 2, the job, via mw",
			seen.count(), dup.Duplicate, dup.ID, got.Metadata)
	}
}

// TestOpen_EnqueueMiddlewareNil refuses a nil middleware in Options, and
// UseEnqueue panics on one.
func TestOpen_EnqueueMiddlewareNil(t *testing.T) {
	t.Parallel()
	_, err := openBackend(t, t.TempDir()+"/q.db", litequeue.Options{EnqueueMiddleware: []func(litequeue.Enqueuer) litequeue.Enqueuer{requireTenant, nil}})
	if err == nil || !strings.Contains(err.Error(), "EnqueueMiddleware[1] is a nil middleware") {
		t.Errorf("Open: %v, want a refusal of EnqueueMiddleware[1]", err)
	}
	q, _ := openQueue(t, litequeue.Options{})
	defer func() {
		if p := recover(); p == nil || p != "litequeue: UseEnqueue[0] is a nil middleware" {
			t.Errorf("UseEnqueue(nil) panicked with %v", p)
		}
	}()
	q.UseEnqueue(nil)
}
