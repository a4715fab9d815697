package dashboard_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// backend opens Queues on one database of a backend: the first call
// makes the database, each call opens another Queue on it.
type backend struct {
	name string
	open func(tb testing.TB) func(opts litequeue.Options) *litequeue.Queue
}

// backends are the file and the server; the server's tests skip without
// one (see pgtest.DSN).
var backends = []backend{
	{"file", func(tb testing.TB) func(litequeue.Options) *litequeue.Queue {
		path := filepath.Join(tb.TempDir(), "flow.db")
		return func(opts litequeue.Options) *litequeue.Queue {
			return closing(tb)(litequeue.Open(path, opts))
		}
	}},
	{"server", func(tb testing.TB) func(litequeue.Options) *litequeue.Queue {
		dsn := pgtest.DSN(tb)
		return func(opts litequeue.Options) *litequeue.Queue {
			return closing(tb)(postgres.Open(context.Background(), dsn, opts))
		}
	}},
}

// closing returns a function that fails the test on a Queue's open
// error, and closes the Queue at its end.
func closing(tb testing.TB) func(*litequeue.Queue, error) *litequeue.Queue {
	return func(q *litequeue.Queue, err error) *litequeue.Queue {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { q.Close() })
		return q
	}
}

// eachBackend runs the test on the file and on the server.
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b)
		})
	}
}

// flow is a database as an operator finds it when the flow control is at
// work: the queue "emails" paused, the kind "report.build" paused, the
// breaker of "sync.push" open after two failed runs, a run of the
// limited kind "thumb.make" in progress, and a schedule.
type flow struct {
	q     *litequeue.Queue
	clk   *clock.Mock
	open  func(litequeue.Options) *litequeue.Queue // another Queue on the database
	thumb *litequeue.Job                           // running: its handler waits for the test's end
}

// The flow's kinds' options.
const (
	thumbMax     = 3
	thumbRate    = 10
	thumbTimeout = 2 * time.Minute
	syncCooldown = 5 * time.Minute
)

// newFlow makes the flow on b at epoch on a mock clock, and starts the
// run of thumb.make 3 minutes later.
func newFlow(t *testing.T, b backend) *flow {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	open := b.open(t)
	f := &flow{q: open(litequeue.Options{Clock: clk}), clk: clk, open: open}
	q, ctx := f.q, context.Background()
	q.Handle("sync.push", func(context.Context, *litequeue.Job) error { return errors.New("503 from the partner") },
		litequeue.WithBreaker(litequeue.Breaker{Failures: 2, Cooldown: syncCooldown}))
	q.Handle("report.build", func(context.Context, *litequeue.Job) error { return nil })
	started, release := make(chan struct{}, 1), make(chan struct{})
	q.Handle("thumb.make", func(ctx context.Context, job *litequeue.Job) error {
		started <- struct{}{}
		<-release
		return nil
	}, litequeue.MaxRunning(thumbMax), litequeue.RateLimit(thumbRate, time.Minute), litequeue.WithTimeout(thumbTimeout))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	enqueue := func(kind string, opts ...litequeue.EnqueueOption) *litequeue.Job {
		t.Helper()
		j, err := q.Enqueue(ctx, kind, map[string]string{"for": kind}, opts...)
		must(err)
		return j
	}
	enqueue("sync.push", litequeue.MaxTries(1))
	enqueue("sync.push", litequeue.MaxTries(1))
	_, err := q.RunDue(ctx)
	must(err)
	enqueue("email.send", litequeue.OnQueue("emails"))
	must(q.PauseQueue(ctx, "emails"))
	enqueue("report.build")
	enqueue("report.build")
	must(q.PauseKind(ctx, "report.build"))
	must(q.Periodic(ctx, "nightly", "0 3 * * *", "report.build", nil))
	clk.Add(3 * time.Minute) // before the run of thumb.make: it is not to time out
	f.thumb = enqueue("thumb.make", litequeue.OnQueue("media"))
	done := make(chan error, 1)
	go func() { _, err := q.RunDue(ctx); done <- err }()
	t.Cleanup(func() { // before the Queue closes
		close(release)
		if err := <-done; err != nil {
			t.Errorf("RunDue of thumb.make: %v", err)
		}
	})
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("RunDue ended before thumb.make started: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("thumb.make did not start in 10s")
	}
	return f
}

// server serves the flow's dashboard with opts, on a test server.
func (f *flow) server(t *testing.T, opts dashboard.Options) *httptest.Server {
	t.Helper()
	opts.Clock = f.clk
	srv := httptest.NewServer(dashboard.New(f.q, opts))
	t.Cleanup(srv.Close)
	return srv
}
