package litequeue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// email is the payload of the typed kinds under test.
type email struct {
	To   string `json:"to"`
	Tags []string
}

var welcome = litequeue.NewKind[email]("email.welcome")

// handled registers a handler of k on q that records the payloads it is
// given, in the order of the runs.
func handled[T any](q *litequeue.Queue, k litequeue.Kind[T]) *[]T {
	var got []T
	k.Handle(q, func(ctx context.Context, job *litequeue.Job, args T) error {
		got = append(got, args)
		return nil
	})
	return &got
}

func TestKind_EnqueueHandle(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	got := handled(q, welcome)
	want := email{To: "ada@example.com", Tags: []string{"new"}}
	job, err := welcome.Enqueue(t.Context(), q, want, litequeue.Priority(2))
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	if job.Kind != "email.welcome" || job.Kind != welcome.Name() || job.Priority != 2 {
		t.Errorf("job = %+v, want of kind email.welcome, priority 2", job)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue ran %d, want 1", n)
	}
	if diff := cmp.Diff([]email{want}, *got); diff != "" {
		t.Errorf("handled payloads (-want +got):\n%s", diff)
	}
	if s := get(t, q, job.ID).State; s != litequeue.Completed {
		t.Errorf("job is %s, want completed", s)
	}
}

func TestKind_EnqueueMany(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	got := handled(q, welcome)
	want := []email{{To: "ada@example.com"}, {To: "alan@example.com"}, {To: "grace@example.com"}}
	jobs, err := welcome.EnqueueMany(t.Context(), q, want, litequeue.OnQueue("mail"))
	if err != nil {
		t.Fatalf("EnqueueMany: %v", err)
	}
	if len(jobs) != len(want) {
		t.Fatalf("EnqueueMany returned %d jobs, want %d", len(jobs), len(want))
	}
	for i, j := range jobs {
		args, err := welcome.Args(j)
		if err != nil || args.To != want[i].To || j.Queue != "mail" {
			t.Errorf("job %d: Args = %+v, %v, queue %q; want %+v on queue mail", j.ID, args, err, j.Queue, want[i])
		}
	}
	if n := runDue(t, q); n != 3 {
		t.Fatalf("RunDue ran %d, want 3", n)
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("handled payloads (-want +got):\n%s", diff)
	}
}

// TestKind_EnqueueTx enqueues in the app's own transactions: the job of
// the committed one exists, that of the rolled-back one does not.
func TestKind_EnqueueTx(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()
	enqueueIn := func(to string, commit bool) *litequeue.Job {
		t.Helper()
		tx, err := q.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		job, err := welcome.EnqueueTx(ctx, q, tx, email{To: to})
		if err != nil {
			t.Fatalf("EnqueueTx: %v", err)
		}
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
		return job
	}
	kept := enqueueIn("ada@example.com", true)
	dropped := enqueueIn("alan@example.com", false)
	if !exists(t, q, kept.ID) || exists(t, q, dropped.ID) {
		t.Errorf("after commit and rollback: job %d exists %v, job %d exists %v; want true, false",
			kept.ID, exists(t, q, kept.ID), dropped.ID, exists(t, q, dropped.ID))
	}
	args, err := welcome.Args(get(t, q, kept.ID))
	if err != nil || args.To != "ada@example.com" {
		t.Errorf("Args of the committed job = %+v, %v; want To ada@example.com", args, err)
	}
}

// TestKind_StringAPI checks that the typed and the string API make and
// read the same jobs: JSON enqueued under the kind's name is read by Args
// and run by Kind.Handle, and a typed job is run by a JSON handler.
func TestKind_StringAPI(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	got := handled(q, welcome)
	fromText := enqueue(t, q, "email.welcome", json.RawMessage(`{"Tags": ["a"], "to": "ada@example.com"}`))
	fromMap := enqueue(t, q, "email.welcome", map[string]any{"to": "alan@example.com"})
	for _, j := range []*litequeue.Job{fromText, fromMap} {
		if _, err := welcome.Args(get(t, q, j.ID)); err != nil {
			t.Errorf("Args of job %d enqueued with the string API: %v", j.ID, err)
		}
	}
	if n := runDue(t, q); n != 2 {
		t.Fatalf("RunDue ran %d, want 2", n)
	}
	want := []email{{To: "ada@example.com", Tags: []string{"a"}}, {To: "alan@example.com"}}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("Kind.Handle given (-want +got):\n%s", diff)
	}

	var byJSON []email
	reminder := litequeue.NewKind[email]("email.reminder")
	q.Handle(reminder.Name(), litequeue.JSON(func(ctx context.Context, job *litequeue.Job, e email) error {
		byJSON = append(byJSON, e)
		return nil
	}))
	if _, err := reminder.Enqueue(t.Context(), q, want[0]); err != nil {
		t.Fatal(err)
	}
	runDue(t, q)
	if diff := cmp.Diff(want[:1], byJSON); diff != "" {
		t.Errorf("JSON handler given (-want +got):\n%s", diff)
	}
}

func TestKind_Args(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	other := enqueue(t, q, "email.sned", email{To: "ada@example.com"})
	_, err := welcome.Args(other)
	if want := fmt.Sprintf(`litequeue: job %d is of kind "email.sned", not "email.welcome"`, other.ID); err == nil || err.Error() != want {
		t.Errorf("Args of a job of another kind: %v, want %q", err, want)
	}

	bad := enqueue(t, q, "email.welcome", "ada@example.com") // a string, not an email
	_, err = welcome.Args(bad)
	want := fmt.Sprintf(`litequeue: decode job %d payload of kind "email.welcome" as litequeue_test.email: json: cannot unmarshal`, bad.ID)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Args of a payload that does not decode: %v, want it to start %q", err, want)
	}

	raw := litequeue.NewKind[[]byte]("blob")
	job, err := raw.Enqueue(t.Context(), q, []byte("not JSON\x00"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := raw.Args(get(t, q, job.ID)); err != nil || string(got) != "not JSON\x00" {
		t.Errorf("Args of a []byte kind = %q, %v; want the bytes as enqueued", got, err)
	}
}

// TestKind_HandleBadPayload: a payload that does not decode as T kills
// the job at once, with the error of Args in its history.
func TestKind_HandleBadPayload(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	got := handled(q, welcome)
	job := enqueue(t, q, "email.welcome", 42)
	runDue(t, q)
	if len(*got) != 0 {
		t.Errorf("handler ran with %v, want it not run", *got)
	}
	if s := get(t, q, job.ID).State; s != litequeue.Dead {
		t.Errorf("job is %s, want dead", s)
	}
	h := history(t, q, job.ID)
	if len(h) != 1 || !strings.Contains(h[0].Error, `payload of kind "email.welcome" as litequeue_test.email`) {
		t.Errorf("history = %+v, want one run whose error names the kind and the type", h)
	}
}

func TestKind_Periodic(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	got := handled(q, welcome)
	want := email{To: "ops@example.com"}
	if err := welcome.Periodic(t.Context(), q, "digest", "@hourly", want); err != nil {
		t.Fatalf("Periodic: %v", err)
	}
	clk.Add(time.Hour)
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue an hour later ran %d, want 1", n)
	}
	if diff := cmp.Diff([]email{want}, *got); diff != "" {
		t.Errorf("handled payloads (-want +got):\n%s", diff)
	}
}

// TestNewKind_BadName: NewKind panics on a name that Handle panics on,
// with Handle's words.
func TestNewKind_BadName(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	panicOf := func(f func()) (r any) {
		defer func() { r = recover() }()
		f()
		return nil
	}
	for _, name := range []string{"", "email\nwelcome", strings.Repeat("k", litequeue.NameLimit+1)} {
		got := panicOf(func() { litequeue.NewKind[email](name) })
		handle := panicOf(func() { q.Handle(name, ok) })
		want := strings.Replace(fmt.Sprint(handle), "Handle", "NewKind", 1)
		if got == nil || fmt.Sprint(got) != want {
			t.Errorf("NewKind(%.20q) panicked with %v, want %q", name, got, want)
		}
	}
	if r := panicOf(func() { litequeue.NewKind[email]("email.welcome") }); r != nil {
		t.Errorf("NewKind of a good name panicked: %v", r)
	}
}
