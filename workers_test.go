package litequeue_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// workersOf reads q's list of workers, failing the test on error.
func workersOf(tb testing.TB, q *litequeue.Queue) []litequeue.WorkerInfo {
	tb.Helper()
	ws, err := q.Workers(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return ws
}

// workerNamed returns the worker of ws with the name, or nil.
func workerNamed(ws []litequeue.WorkerInfo, name string) *litequeue.WorkerInfo {
	i := slices.IndexFunc(ws, func(w litequeue.WorkerInfo) bool { return w.Name == name })
	if i < 0 {
		return nil
	}
	return &ws[i]
}

// TestQueue_Workers: two Work loops on two Queues of one database, each
// on a clock of its own, record themselves when they start, with their
// options and handled kinds; one records a kind handled later at once,
// and, at its heartbeat, the handler it runs; the other, whose clock
// stands still as a hung process's, is silent once the first's clock is
// WorkerSilentAfter on, and forgotten by the first's janitor a day
// later; a loop that returns deletes its record.
func TestQueue_Workers(t *testing.T) {
	t.Parallel()
	clk, still := newMock(), newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	other := openAt(t, path, litequeue.Options{Clock: still})
	if ws := workersOf(t, q); len(ws) != 0 {
		t.Fatalf("Workers before any Work = %+v, want none", ws)
	}
	started, release := make(chan struct{}, 1), make(chan struct{})
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
		started <- struct{}{}
		<-release
		return nil
	})
	q.Handle("audit", ok)
	other.Handle("report.build", ok)
	stop := startWork(t, q, litequeue.WorkerOptions{Queues: []string{"emails", "audit"}, Concurrency: 3, Name: "mailer"})
	stopOther := startWork(t, other, litequeue.WorkerOptions{Name: "reports"})
	waitFor(t, "both workers recorded", func() bool { return len(workersOf(t, q)) == 2 })

	host, _ := os.Hostname()
	want := []litequeue.WorkerInfo{
		{Name: "mailer", Host: host, PID: os.Getpid(), Queues: []string{"emails", "audit"}, Kinds: []string{"audit", "email.send"},
			Concurrency: 3, Started: epoch, LastSeen: epoch},
		{Name: "reports", Host: host, PID: os.Getpid(), Kinds: []string{"report.build"},
			Concurrency: litequeue.DefaultConcurrency, Started: epoch, LastSeen: epoch},
	}
	ws := workersOf(t, q)
	if diff := cmp.Diff(want, ws, cmpopts.IgnoreFields(litequeue.WorkerInfo{}, "ID"), cmpopts.EquateApproxTime(0),
		cmpopts.SortSlices(func(a, b litequeue.WorkerInfo) bool { return a.Name < b.Name })); diff != "" {
		t.Errorf("Workers (-want +got):\n%s", diff)
	}
	if len(ws) == 2 && (ws[0].ID == ws[1].ID || len(ws[0].ID) != 16) {
		t.Errorf("worker IDs %q and %q: want two of 16 hex digits", ws[0].ID, ws[1].ID)
	}

	q.Handle("late", ok)
	waitFor(t, "the kind handled later recorded", func() bool {
		w := workerNamed(workersOf(t, q), "mailer")
		return w != nil && slices.Contains(w.Kinds, "late")
	})

	enqueue(t, q, "email.send", nil, litequeue.OnQueue("emails"))
	waitClosed(t, "the email's handler started", closedOn(started))
	clk.Add(litequeue.WorkerHeartbeat)
	beat := epoch.Add(litequeue.WorkerHeartbeat)
	waitFor(t, "the mailer's heartbeat with its run", func() bool {
		w := workerNamed(workersOf(t, q), "mailer")
		return w != nil && w.LastSeen.Equal(beat) && w.Running == 1
	})
	close(release)

	clk.Add(litequeue.WorkerSilentAfter)
	silentAt := beat.Add(litequeue.WorkerSilentAfter)
	waitFor(t, "the mailer's next heartbeat", func() bool {
		w := workerNamed(workersOf(t, q), "mailer")
		return w != nil && w.LastSeen.Equal(silentAt)
	})
	for _, w := range workersOf(t, q) {
		if w.Silent != (w.Name == "reports") {
			t.Errorf("%s last seen %v, at %v: Silent %v", w.Name, w.LastSeen, clk.Now(), w.Silent)
		}
	}
	if w := workerNamed(workersOf(t, other), "reports"); w == nil || w.Silent {
		t.Errorf("on its own clock, the still worker is %+v; want it listed, not silent", w)
	}

	clk.Add(24 * time.Hour)
	waitFor(t, "the janitor forgets the worker silent for a day", func() bool {
		return workerNamed(workersOf(t, q), "reports") == nil
	})
	if err := stopOther(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if ws := workersOf(t, q); len(ws) != 0 {
		t.Errorf("Workers after both Work calls returned = %+v, want none", ws)
	}
}

// closedOn returns a channel closed once ch has given a value.
func closedOn(ch <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() { <-ch; close(done) }()
	return done
}

// TestQueue_Workers_Close: on the real clock, a Work loop records itself
// and goes on working; Close ends it as a clean return does: its record
// is deleted. A Queue from OpenReadOnly lists the workers of the others.
func TestQueue_Workers_Close(t *testing.T) {
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{Clock: clock.New()})
	q.Handle("k", ok)
	done := make(chan error, 1)
	go func() { done <- q.Work(context.Background(), litequeue.WorkerOptions{Name: "closing"}) }()
	waitFor(t, "the worker recorded", func() bool { return len(workersOf(t, q)) == 1 })
	job := enqueue(t, q, "k", nil)
	waitFor(t, "the job run", func() bool { return get(t, q, job.ID).State == litequeue.Completed })
	if !serverRun() {
		ro, err := litequeue.OpenReadOnly(path, litequeue.Options{Clock: newMock()})
		if err != nil {
			t.Fatal(err)
		}
		if ws := workersOf(t, ro); len(ws) != 1 || ws[0].Name != "closing" || ws[0].Silent {
			t.Errorf("Workers read only = %+v, want the one worker, not silent", ws)
		}
		ro.Close()
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Work after Close: %v", err)
	}
	reader := openAt(t, path, litequeue.Options{})
	if ws := workersOf(t, reader); len(ws) != 0 {
		t.Errorf("Workers after Close = %+v, want none", ws)
	}
}

// TestOpenReadOnly_NoWorkersTable: a file that no binary which records
// its workers has opened to write, without litequeue_workers, opened
// read-only lists no workers, without error; the next Open to write
// gives it the table.
func TestOpenReadOnly_NoWorkersTable(t *testing.T) {
	fileOnly(t, "OpenReadOnly of a file whose schema lacks a table")
	t.Parallel()
	q, path := openQueue(t, litequeue.Options{})
	if _, err := q.DB().Exec(`DROP TABLE litequeue_workers`); err != nil {
		t.Fatal(err)
	}
	q.Close()
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ws, err := ro.Workers(context.Background()); ws != nil || err != nil {
		t.Errorf("Workers read only, without the table = %+v, %v; want none, no error", ws, err)
	}
	writer := openAt(t, path, litequeue.Options{})
	writer.Handle("k", ok)
	stop := startWork(t, writer, litequeue.WorkerOptions{Name: "upgraded"})
	defer stop()
	waitFor(t, "the worker recorded on the file the Open completed", func() bool { return len(workersOf(t, writer)) == 1 })
}
