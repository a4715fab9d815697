package litequeue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

func TestQueue_Enqueue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t.Run("stores the job as given", func(t *testing.T) {
		t.Parallel()
		q, _ := openQueue(t, litequeue.Options{})
		j, err := q.Enqueue(ctx, "email", map[string]string{"to": "a@b.c"},
			litequeue.OnQueue("mail"), litequeue.Priority(7), litequeue.MaxTries(3), litequeue.Delay(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		want := &litequeue.Job{
			ID: j.ID, Queue: "mail", Kind: "email", Payload: []byte(`{"to":"a@b.c"}`), State: litequeue.Pending,
			Priority: 7, MaxTries: 3, RunAt: epoch.Add(time.Minute), CreatedAt: epoch,
		}
		opt := cmp.AllowUnexported(litequeue.Job{})
		ignoreToken := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".token" }, cmp.Ignore())
		if diff := cmp.Diff(want, j, opt, ignoreToken); diff != "" {
			t.Fatalf("Enqueue returned (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, get(t, q, j.ID), opt, ignoreToken); diff != "" {
			t.Fatalf("Get returned (-want +got):\n%s", diff)
		}
	})
	t.Run("raw payloads are stored byte for byte", func(t *testing.T) {
		t.Parallel()
		q, _ := openQueue(t, litequeue.Options{})
		for _, p := range []any{[]byte("not json at all"), json.RawMessage(`{"a" :  1}`)} {
			j := enqueue(t, q, "k", p)
			want := fmt.Sprintf("%s", p)
			if got := string(get(t, q, j.ID).Payload); got != want {
				t.Fatalf("payload = %q, want %q", got, want)
			}
		}
	})
	t.Run("the last of Delay and At wins", func(t *testing.T) {
		t.Parallel()
		q, _ := openQueue(t, litequeue.Options{})
		j := enqueue(t, q, "k", nil, litequeue.At(epoch.Add(time.Hour)), litequeue.Delay(time.Second))
		if !j.RunAt.Equal(epoch.Add(time.Second)) {
			t.Errorf("At then Delay: RunAt %v", j.RunAt)
		}
		j = enqueue(t, q, "k", nil, litequeue.Delay(time.Second), litequeue.At(epoch.Add(time.Hour)))
		if !j.RunAt.Equal(epoch.Add(time.Hour)) {
			t.Errorf("Delay then At: RunAt %v", j.RunAt)
		}
	})
	t.Run("bad input is refused and writes nothing", func(t *testing.T) {
		t.Parallel()
		q, _ := openQueue(t, litequeue.Options{MaxPayload: 10})
		bad := []struct {
			kind    string
			payload any
			opts    []litequeue.EnqueueOption
			want    string
		}{
			{"", nil, nil, "empty kind"},
			{"k", nil, []litequeue.EnqueueOption{litequeue.Delay(-time.Second)}, "negative delay -1s"},
			{"k", nil, []litequeue.EnqueueOption{litequeue.MaxTries(51)}, "max_tries 51 is outside 1…50"},
			{"k", nil, []litequeue.EnqueueOption{litequeue.MaxTries(0)}, "max_tries 0 is outside 1…50"},
			{"k", nil, []litequeue.EnqueueOption{litequeue.At(time.Time{})}, "At the zero time.Time"},
			{"k", nil, []litequeue.EnqueueOption{litequeue.OnQueue("")}, "empty queue name"},
			{"k", strings.Repeat("x", 20), nil, "payload of 22 bytes is over the limit of 10 bytes"},
			{"k", func() {}, nil, "encode payload"},
		}
		for _, b := range bad {
			_, err := q.Enqueue(ctx, b.kind, b.payload, b.opts...)
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Errorf("Enqueue(%q, %v): err %v, want one containing %q", b.kind, b.payload, err, b.want)
			}
		}
		for _, payloads := range [][]any{{1, 2}, {1}} {
			_, err := q.EnqueueMany(ctx, "k", payloads, litequeue.UniqueKey("u"))
			if err == nil || !strings.Contains(err.Error(), `EnqueueMany refuses UniqueKey "u"`) {
				t.Errorf("EnqueueMany of %d with UniqueKey: err %v", len(payloads), err)
			}
		}
		if _, err := q.EnqueueMany(ctx, "", nil); err == nil || !strings.Contains(err.Error(), "empty kind") {
			t.Errorf("EnqueueMany of nothing with an empty kind: err %v", err)
		}
		if jobs, err := q.List(ctx, litequeue.Filter{}); err != nil || len(jobs) != 0 {
			t.Fatalf("List after refusals: %d jobs, err %v; want none", len(jobs), err)
		}
	})
	t.Run("times beyond Unix milliseconds in an int64 are refused", func(t *testing.T) {
		t.Parallel()
		clk := newMock()
		q, _ := openQueue(t, litequeue.Options{Clock: clk})
		latest := time.UnixMilli(math.MaxInt64)
		earliest := time.UnixMilli(math.MinInt64)
		const limits = "-292275055-05-16T16:47:04.192Z … 292278994-08-17T07:12:55.807Z"
		for _, at := range []time.Time{
			time.Unix(1<<62, 0), // stored as 1970 before
			time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(-300_000_000, 1, 1, 0, 0, 0, 0, time.UTC),
			latest.Add(time.Millisecond),
			earliest.Add(-time.Nanosecond),
		} {
			_, err := q.Enqueue(ctx, "k", nil, litequeue.At(at))
			if err == nil || !strings.Contains(err.Error(), "is outside the Unix milliseconds an int64 holds, "+limits) {
				t.Errorf("At(%v): err %v, want one naming the limits", at, err)
			}
		}
		if _, err := q.EnqueueMany(ctx, "k", nil, litequeue.At(time.Unix(1<<62, 0))); err == nil {
			t.Errorf("EnqueueMany of nothing At year 146,138,514,283: no error")
		}
		if jobs, err := q.List(ctx, litequeue.Filter{}); err != nil || len(jobs) != 0 {
			t.Fatalf("List after refusals: %d jobs, err %v; want none", len(jobs), err)
		}
		for _, at := range []time.Time{latest, earliest, latest.Add(time.Millisecond - 1)} {
			j := enqueue(t, q, "k", nil, litequeue.At(at))
			if got := get(t, q, j.ID).RunAt; !got.Equal(at.Truncate(time.Millisecond)) || !j.RunAt.Equal(got) {
				t.Errorf("At(%v): RunAt %v stored, %v returned", at, got, j.RunAt)
			}
		}

		// Delay: the clock an hour before the latest time.
		clk.Set(latest.Add(-time.Hour))
		_, err := q.Enqueue(ctx, "k", nil, litequeue.Delay(2*time.Hour))
		if err == nil || !strings.Contains(err.Error(), "delay 2h0m0s makes the job due at 292278994-08-17T08:12:55.807Z, outside the Unix milliseconds an int64 holds") {
			t.Errorf("Delay(2h) an hour before the limit: err %v", err)
		}
		if j := enqueue(t, q, "k", nil, litequeue.Delay(time.Hour)); !get(t, q, j.ID).RunAt.Equal(latest) {
			t.Errorf("Delay(1h) an hour before the limit: RunAt %v, want %v", get(t, q, j.ID).RunAt, latest)
		}
	})
	t.Run("unique key returns the live job", func(t *testing.T) {
		t.Parallel()
		q, _ := openQueue(t, litequeue.Options{})
		first := enqueue(t, q, "k", 1, litequeue.UniqueKey("order-1"))
		second := enqueue(t, q, "k", 2, litequeue.UniqueKey("order-1"))
		if !second.Duplicate || second.ID != first.ID || first.Duplicate {
			t.Fatalf("second enqueue = %+v, want the first job (%d) marked Duplicate", second, first.ID)
		}
		q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
		runDue(t, q)
		third := enqueue(t, q, "k", 3, litequeue.UniqueKey("order-1"))
		if third.Duplicate || third.ID == first.ID {
			t.Fatalf("after the first completed, enqueue = %+v, want a new job", third)
		}
	})
}

func TestQueue_EnqueueMany(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	payloads := make([]any, 100)
	for i := range payloads {
		payloads[i] = i
	}
	// The newest job deleted before the batch: its ID is not given again,
	// and the batch's IDs are still each its own job's.
	gone := enqueue(t, q, "n", "gone")
	if err := q.Cancel(t.Context(), gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := q.Delete(t.Context(), gone.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := q.EnqueueMany(t.Context(), "n", payloads, litequeue.OnQueue("bulk"))
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		want := strconv.Itoa(i)
		if string(j.Payload) != want || string(get(t, q, j.ID).Payload) != want || j.Queue != "bulk" || j.ID <= gone.ID {
			t.Fatalf("job %d of the batch: ID %d (deleted %d), returned payload %s on %q, stored %s; want %s on bulk",
				i, j.ID, gone.ID, j.Payload, j.Queue, get(t, q, j.ID).Payload, want)
		}
	}
	var got []int
	q.Handle("n", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, n int) error {
		got = append(got, n)
		return nil
	}))
	if n := runDue(t, q); n != 100 || len(jobs) != 100 {
		t.Fatalf("ran %d of %d jobs, want 100", n, len(jobs))
	}
	for i, n := range got {
		if n != i {
			t.Fatalf("run %d had payload %d: jobs ran out of ID order", i, n)
		}
	}
}

// TestQueue_EnqueueManyBytes stores binary payloads of a batch byte for
// byte, empty and nil ones included, each under the ID returned for it;
// and the same payloads enqueued one by one.
func TestQueue_EnqueueManyBytes(t *testing.T) {
	fileOnly(t, "SQLite's storage classes")
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	payloads := []any{[]byte{0, 1, 0xff, '"', '\\'}, []byte(nil), []byte{}, json.RawMessage(`{"a":"\u00e9"}`), []byte("é\n")}
	jobs, err := q.EnqueueMany(t.Context(), "b", payloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range payloads {
		jobs = append(jobs, enqueue(t, q, "b", p))
	}
	for n, j := range jobs {
		i := n % len(payloads)
		want := payloads[i]
		var wantBytes []byte
		switch w := want.(type) {
		case []byte:
			wantBytes = w
		case json.RawMessage:
			wantBytes = w
		}
		got := get(t, q, j.ID)
		if diff := cmp.Diff(got, j, cmpopts.IgnoreUnexported(litequeue.Job{})); diff != "" {
			t.Errorf("job %d (payload %d): the job returned differs from Get's (-get +returned):\n%s", n, i, diff)
		}
		stored := got.Payload
		var typ string
		if err := q.DB().Get(&typ, q.DB().Rebind(`SELECT typeof(payload) FROM litequeue_jobs WHERE id = ?`), j.ID); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(stored, wantBytes) || !bytes.Equal(j.Payload, wantBytes) || typ != "blob" {
			t.Errorf("payload %d: stored %q (%s), returned %q, want %q (blob)", i, stored, typ, j.Payload, wantBytes)
		}
	}
}

// TestQueue_MaxTriesOverride makes one job's MaxTries win over the policy.
func TestQueue_MaxTriesOverride(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retry: fixedPolicy})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return context.Canceled })
	j := enqueue(t, q, "k", nil, litequeue.MaxTries(1))
	runDue(t, q)
	if got := get(t, q, j.ID); got.State != litequeue.Dead || got.MaxTries != 1 {
		t.Fatalf("job = %s with MaxTries %d, want dead after its own single try", got.State, got.MaxTries)
	}
}

// TestQueue_IDsNeverReused purges finished jobs, the newest one among them,
// and enqueues again: every new ID is greater than every ID handed out
// before, so nothing built from an old ID reaches a new job.
func TestQueue_IDsNeverReused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("ok", func(ctx context.Context, job *litequeue.Job) error { return nil })
	var highest int64
	for range 3 {
		highest = enqueue(t, q, "ok", nil).ID
	}
	runDue(t, q)
	clk.Add(litequeue.DefaultKeepFinished)
	runDue(t, q) // purges all three
	if exists(t, q, highest) {
		t.Fatalf("job %d not purged", highest)
	}
	j := enqueue(t, q, "ok", nil)
	many, err := q.EnqueueMany(ctx, "ok", []any{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []int64{j.ID, many[0].ID, many[1].ID} {
		if got <= highest {
			t.Errorf("new job got ID %d, handed out before (the highest was %d)", got, highest)
		}
	}
}

// TestQueue_IDAfterPurgeIsNotTheOldJob is issue 11's case: a handler keeps
// an idempotency key built from the job's ID for 7 days. Once retention
// purged the job, a new job must neither skip its side effect because of
// the old key nor be hit by a stale Cancel of the old ID.
func TestQueue_IDAfterPurgeIsNotTheOldJob(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	charges := 0
	q.Handle("charge", func(ctx context.Context, job *litequeue.Job) error {
		key := fmt.Sprintf("charge:job-%d", job.ID)
		done, err := q.Seen(ctx, key)
		if err != nil || done {
			return err
		}
		charges++
		return q.Mark(ctx, key, 7*24*time.Hour)
	})
	old := enqueue(t, q, "charge", nil)
	runDue(t, q)
	clk.Add(litequeue.DefaultKeepFinished)
	runDue(t, q) // purges the completed job; its key stays
	if exists(t, q, old.ID) {
		t.Fatalf("job %d not purged", old.ID)
	}

	next := enqueue(t, q, "charge", nil)
	if err := q.Cancel(ctx, old.ID); !errors.Is(err, litequeue.ErrNotFound) {
		t.Errorf("Cancel(%d) of the purged job: %v, want ErrNotFound", old.ID, err)
	}
	if got := get(t, q, next.ID); got.State != litequeue.Pending {
		t.Fatalf("the new job is %s after a Cancel of the purged job's ID", got.State)
	}
	runDue(t, q)
	if charges != 2 {
		t.Errorf("%d charges, want 2: the new job (ID %d) skipped its charge for the purged job's key", charges, next.ID)
	}
}

// TestQueue_UniqueKeyRace races Enqueue with one UniqueKey, and Mark of one
// key, from goroutines on one Queue and on two Queues on one file: exactly
// one job is inserted, every caller gets it, and no Mark fails.
func TestQueue_UniqueKeyRace(t *testing.T) {
	t.Parallel()
	for _, queues := range []int{1, 2} {
		t.Run(map[int]string{1: "one queue", 2: "two queues"}[queues], func(t *testing.T) {
			clk := newMock()
			var ev events
			q1, path := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
			qs := []*litequeue.Queue{q1}
			if queues == 2 {
				qs = append(qs, openAt(t, path, litequeue.Options{Clock: clk, OnEvent: ev.record}))
			}
			const callers = 16
			jobs := make([]*litequeue.Job, callers)
			errs := make([]error, 2*callers)
			var wg sync.WaitGroup
			for i := range callers {
				q := qs[i%len(qs)]
				wg.Go(func() {
					jobs[i], errs[i] = q.Enqueue(t.Context(), "send", i, litequeue.UniqueKey("invoice-7"))
				})
				wg.Go(func() {
					errs[callers+i] = q.Mark(t.Context(), "invoice-7", time.Hour)
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			first := 0
			for _, j := range jobs {
				if !j.Duplicate {
					first++
				}
				if j.ID != jobs[0].ID {
					t.Fatalf("callers got jobs %d and %d, want one job", jobs[0].ID, j.ID)
				}
			}
			if first != 1 {
				t.Fatalf("%d callers inserted a job, want 1", first)
			}
			all, err := q1.List(t.Context(), litequeue.Filter{})
			if err != nil || len(all) != 1 {
				t.Fatalf("List = %d jobs, %v; want 1", len(all), err)
			}
			if n := ev.count("job.enqueued"); n != 1 {
				t.Fatalf("%d job.enqueued events, want 1", n)
			}
			for _, q := range qs {
				if !seen(t, q, "invoice-7") {
					t.Fatalf("key not seen after Mark")
				}
			}
		})
	}
}

// TestQueue_UniqueKeyFreed checks that a key names one live job only: once
// its job finished, the same key enqueues a new job.
func TestQueue_UniqueKeyFreed(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error { return nil })
	first := enqueue(t, q, "send", nil, litequeue.UniqueKey("k"))
	if dup := enqueue(t, q, "send", nil, litequeue.UniqueKey("k")); !dup.Duplicate || dup.ID != first.ID {
		t.Fatalf("second Enqueue = job %d duplicate=%v, want job %d duplicate", dup.ID, dup.Duplicate, first.ID)
	}
	runDue(t, q)
	if next := enqueue(t, q, "send", nil, litequeue.UniqueKey("k")); next.Duplicate || next.ID == first.ID {
		t.Fatalf("Enqueue after completion = job %d duplicate=%v, want a new job", next.ID, next.Duplicate)
	}
}
