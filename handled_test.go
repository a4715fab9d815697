package litequeue_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// refused fails the test unless err is the refusal of kind under
// RefuseUnknownKinds: errors.Is ErrUnknownKind, naming the kind.
func refused(t *testing.T, err error, kind string) {
	t.Helper()
	if !errors.Is(err, litequeue.ErrUnknownKind) {
		t.Fatalf("enqueue of %q = %v, want ErrUnknownKind", kind, err)
	}
	if want := `kind "` + kind + `" has never been handled`; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

// jobCount counts the jobs of q's database.
func jobCount(t *testing.T, q *litequeue.Queue) int {
	t.Helper()
	n, err := q.Count(t.Context(), litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// producerAndWorker opens two Queues on one new database: a producer
// with RefuseUnknownKinds and no handlers, and a worker that handles
// kind with ran, which gets each job's ID.
func producerAndWorker(t *testing.T, kind string) (producer, worker *litequeue.Queue, ran chan int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "queue.db")
	worker = openAt(t, path, litequeue.Options{})
	producer = openAt(t, path, litequeue.Options{RefuseUnknownKinds: true})
	ran = make(chan int64, 10)
	worker.Handle(kind, func(ctx context.Context, job *litequeue.Job) error {
		ran <- job.ID
		return nil
	})
	return producer, worker, ran
}

// TestRefuseUnknownKinds_Work: a producer without handlers refuses a kind
// until a worker on the database has started Work with a handler for it,
// then enqueues it, and the worker runs the job; a kind no one handles
// stays refused, and no refusal stored a job.
func TestRefuseUnknownKinds_Work(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	producer, worker, ran := producerAndWorker(t, "email.welcome")
	_, err := producer.Enqueue(ctx, "email.welcome", Email{To: "ada@example.com"})
	refused(t, err, "email.welcome")
	if n := jobCount(t, producer); n != 0 {
		t.Fatalf("%d jobs after the refusal, want none", n)
	}

	stop := startWork(t, worker, litequeue.WorkerOptions{})
	defer stop()
	var job *litequeue.Job
	waitFor(t, "the producer to accept email.welcome", func() bool {
		job, err = producer.Enqueue(ctx, "email.welcome", Email{To: "ada@example.com"})
		if err != nil && !errors.Is(err, litequeue.ErrUnknownKind) {
			t.Fatal(err)
		}
		return err == nil
	})
	select {
	case id := <-ran:
		if id != job.ID {
			t.Fatalf("ran job %d, want %d", id, job.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not run the job")
	}
	_, err = producer.Enqueue(ctx, "email.welcom", nil) // a typo
	refused(t, err, "email.welcom")
	if n := jobCount(t, producer); n != 1 {
		t.Fatalf("%d jobs, want the one accepted", n)
	}
}

// TestRefuseUnknownKinds_RunDue: a RunDue records the kinds of its
// Queue's handlers too, also with nothing due, and so does a Handle
// after it at the next RunDue; a Queue with no handler records nothing.
func TestRefuseUnknownKinds_RunDue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	producer, worker, _ := producerAndWorker(t, "resize")
	idle := openAt(t, filepath.Join(t.TempDir(), "other.db"), litequeue.Options{})
	runDue(t, idle)
	_, err := producer.Enqueue(ctx, "resize", nil)
	refused(t, err, "resize")
	if n := runDue(t, worker); n != 0 {
		t.Fatalf("RunDue ran %d jobs, want 0", n)
	}
	if _, err := producer.Enqueue(ctx, "resize", nil); err != nil {
		t.Fatalf("enqueue after the worker's RunDue: %v", err)
	}
	_, err = producer.Enqueue(ctx, "thumbnail", nil)
	refused(t, err, "thumbnail")
	worker.Handle("thumbnail", ok)
	if n := runDue(t, worker); n != 1 {
		t.Fatalf("RunDue ran %d jobs, want the resize", n)
	}
	if _, err := producer.Enqueue(ctx, "thumbnail", nil); err != nil {
		t.Fatalf("enqueue of a kind handled since: %v", err)
	}
}

// TestRefuseUnknownKinds_OwnHandler: a kind with a handler on the Queue
// itself is accepted without any Work or RunDue, and without a read of
// the database's kinds; another Queue on the database still refuses it,
// as no worker recorded it.
func TestRefuseUnknownKinds_OwnHandler(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	q, path := openQueue(t, litequeue.Options{RefuseUnknownKinds: true})
	q.Handle("report", ok)
	if _, err := q.Enqueue(ctx, "report", nil); err != nil {
		t.Fatalf("enqueue of the Queue's own kind: %v", err)
	}
	other := openAt(t, path, litequeue.Options{RefuseUnknownKinds: true})
	_, err := other.Enqueue(ctx, "report", nil)
	refused(t, err, "report")
}

// TestRefuseUnknownKinds_EveryWay: EnqueueMany, EnqueueTx (whose
// transaction then commits), a typed kind's Enqueue and EnqueueMany, and
// Periodic refuse an unknown kind, storing nothing: no job, no schedule;
// the enqueue middleware sees none of them. Each accepts the kind once a
// worker recorded it.
func TestRefuseUnknownKinds_EveryWay(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	producer, worker, _ := producerAndWorker(t, "email.welcome")
	welcome := litequeue.NewKind[Email]("email.welcome")
	ways := map[string]func() error{
		"EnqueueMany": func() error {
			_, err := producer.EnqueueMany(ctx, "email.welcome", []any{1, 2})
			return err
		},
		"EnqueueTx": func() error {
			tx, err := producer.DB().BeginTxx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := producer.EnqueueTx(ctx, tx, "email.welcome", 1); err != nil {
				return err
			}
			return tx.Commit()
		},
		"Kind.Enqueue": func() error {
			_, err := welcome.Enqueue(ctx, producer, Email{To: "ada@example.com"})
			return err
		},
		"Kind.EnqueueMany": func() error {
			_, err := welcome.EnqueueMany(ctx, producer, []Email{{To: "ada@example.com"}})
			return err
		},
		"Periodic": func() error {
			return producer.Periodic(ctx, "nightly", "0 3 * * *", "email.welcome", nil)
		},
	}
	var admitted int // by the enqueue middleware
	producer.UseEnqueue(func(next litequeue.Enqueuer) litequeue.Enqueuer {
		return func(ctx context.Context, job *litequeue.NewJob) error {
			admitted++
			return next(ctx, job)
		}
	})
	for name, way := range ways {
		if err := way(); !errors.Is(err, litequeue.ErrUnknownKind) {
			t.Fatalf("%s = %v, want ErrUnknownKind", name, err)
		}
	}
	if admitted != 0 {
		t.Fatalf("the enqueue middleware saw %d refused jobs, want none", admitted)
	}
	if n := jobCount(t, producer); n != 0 {
		t.Fatalf("%d jobs after the refusals, want none", n)
	}
	if p, err := producer.Periodics(ctx); err != nil || len(p) != 0 {
		t.Fatalf("Periodics = %v, %v; want none", p, err)
	}
	runDue(t, worker)
	for name, way := range ways {
		if err := way(); err != nil {
			t.Fatalf("%s after the worker's RunDue: %v", name, err)
		}
	}
	if n := jobCount(t, producer); n != 5 {
		t.Fatalf("%d jobs, want 5", n)
	}
}

// TestRefuseUnknownKinds_OldJobs: Replay and RunNow act on jobs that
// exist, and check no kind: a dead job and a pending one of a kind that
// the database no longer knows (its record deleted) are replayed and
// run now by a Queue that refuses the kind's new jobs.
func TestRefuseUnknownKinds_OldJobs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queue.db")
	old := openAt(t, path, litequeue.Options{})
	old.Handle("legacy", func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.Permanent(errors.New("gone"))
	})
	dead := enqueue(t, old, "legacy", nil)
	runDue(t, old)
	pending := enqueue(t, old, "legacy", nil, litequeue.Delay(time.Hour))
	if _, err := old.DB().Exec(`DELETE FROM litequeue_kinds`); err != nil {
		t.Fatal(err)
	}
	producer := openAt(t, path, litequeue.Options{RefuseUnknownKinds: true})
	_, err := producer.Enqueue(ctx, "legacy", nil)
	refused(t, err, "legacy")
	if err := producer.Replay(ctx, dead.ID); err != nil {
		t.Fatalf("Replay: %v", err)
	}
	if err := producer.RunNow(ctx, pending.ID); err != nil {
		t.Fatalf("RunNow: %v", err)
	}
	for _, id := range []int64{dead.ID, pending.ID} {
		if j := get(t, producer, id); j.State != litequeue.Pending {
			t.Errorf("job %d is %s, want pending", id, j.State)
		}
	}
}

// TestRefuseUnknownKinds_Off: without the option, every kind is enqueued;
// the first enqueue of an unknown kind, by any way, logs one warning
// naming it, once per kind per Queue; a kind a worker recorded, or with a
// handler on the Queue, logs nothing.
func TestRefuseUnknownKinds_Off(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "queue.db")
	worker := openAt(t, path, litequeue.Options{})
	worker.Handle("known", ok)
	runDue(t, worker)
	var logs bytes.Buffer // the Queues log from the test's goroutine alone
	q := openAt(t, path, litequeue.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	q.Handle("own", ok)
	enqueue(t, q, "typo", nil)
	enqueue(t, q, "typo", nil)
	if _, err := q.EnqueueMany(ctx, "typo", []any{1, 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.EnqueueMany(ctx, "other", []any{1}); err != nil {
		t.Fatal(err)
	}
	enqueue(t, q, "known", nil)
	enqueue(t, q, "own", nil)
	var warned []string
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, "level=WARN") {
			_, kind, _ := strings.Cut(line, "kind=")
			warned = append(warned, kind)
		}
	}
	if diff := cmp.Diff([]string{"typo", "other"}, warned); diff != "" {
		t.Errorf("warnings by kind (-want +got):\n%s\nlog:\n%s", diff, logs.String())
	}
	if n := jobCount(t, q); n != 7 {
		t.Fatalf("%d jobs, want 7: a warning refuses nothing", n)
	}
	again := openAt(t, path, litequeue.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	enqueue(t, again, "typo", nil)
	if n := strings.Count(logs.String(), "kind=typo"); n != 2 {
		t.Errorf("typo warned %d times in all, want once per Queue (2)", n)
	}
}

// TestRefuseUnknownKinds_RecordRate: a worker writes its kinds at its
// first RunDue, then refreshes their last sighting only once the last
// record is an hour old on the injected clock; their first sighting
// stays.
func TestRefuseUnknownKinds_RecordRate(t *testing.T) {
	t.Parallel()
	clk := newMock()
	t0 := clk.Now()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("k", ok)
	seen := func() (first, last int64) {
		t.Helper()
		if err := q.DB().QueryRow(`SELECT first_seen, last_seen FROM litequeue_kinds WHERE kind = 'k'`).Scan(&first, &last); err != nil {
			t.Fatal(err)
		}
		return first, last
	}
	ms := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
	for _, step := range []struct {
		at          time.Duration
		first, last int64
	}{
		{0, ms(0), ms(0)},
		{59 * time.Minute, ms(0), ms(0)},
		{time.Hour, ms(0), ms(time.Hour)},
		{time.Hour + 30*time.Minute, ms(0), ms(time.Hour)},
		{2 * time.Hour, ms(0), ms(2 * time.Hour)},
	} {
		clk.Set(t0.Add(step.at))
		runDue(t, q)
		if first, last := seen(); first != step.first || last != step.last {
			t.Fatalf("at +%v: first_seen %d, last_seen %d; want %d, %d", step.at, first, last, step.first, step.last)
		}
	}
}

// TestRefuseUnknownKinds_ReadOnly: a Queue from OpenReadOnly records no
// kind — its Work and RunDue write nothing — and its Enqueue is
// ErrReadOnly, not a refusal.
func TestRefuseUnknownKinds_ReadOnly(t *testing.T) {
	fileOnly(t, "OpenReadOnly is the file's")
	t.Parallel()
	ctx := t.Context()
	producer, path := openQueue(t, litequeue.Options{RefuseUnknownKinds: true})
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{RefuseUnknownKinds: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ro.Handle("k", ok)
	if _, err := ro.RunDue(ctx); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("RunDue = %v, want ErrReadOnly", err)
	}
	if err := ro.Work(ctx, litequeue.WorkerOptions{}); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("Work = %v, want ErrReadOnly", err)
	}
	if _, err := ro.Enqueue(ctx, "nobody", nil); !errors.Is(err, litequeue.ErrReadOnly) {
		t.Fatalf("Enqueue = %v, want ErrReadOnly", err)
	}
	_, err = producer.Enqueue(ctx, "k", nil)
	refused(t, err, "k")
}

// TestRefuseUnknownKinds_WarnOnceConcurrently: enqueues of one unknown
// kind from many goroutines at once, without the option, log one warning
// and enqueue every job.
func TestRefuseUnknownKinds_WarnOnceConcurrently(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer // the handler's own lock orders the goroutines' writes
	q, _ := openQueue(t, litequeue.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := q.Enqueue(t.Context(), "typo", nil)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(logs.String(), "kind=typo"); got != 1 {
		t.Errorf("%d warnings, want 1:\n%s", got, logs.String())
	}
	if got := jobCount(t, q); got != n {
		t.Errorf("%d jobs, want %d", got, n)
	}
}

// TestQueue_Handled lists the kinds with a handler on the Queue, sorted:
// none before Handle, as a Queue that only enqueues has none.
func TestQueue_Handled(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	if diff := cmp.Diff([]string{}, q.Handled()); diff != "" {
		t.Errorf("Handled before Handle (-want +got):\n%s", diff)
	}
	q.Handle("email.send", ok)
	q.Handle("av.scan", ok)
	if diff := cmp.Diff([]string{"av.scan", "email.send"}, q.Handled()); diff != "" {
		t.Errorf("Handled (-want +got):\n%s", diff)
	}
}
