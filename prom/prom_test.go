package prom_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/prom"
)

// TestCollector scrapes a queue with a job in each state that matters and
// a retry and a death in the last hour, on a mock clock.
func TestCollector(t *testing.T) {
	t.Parallel()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{Clock: clk, Rand: func() float64 { return 0.5 }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"bad"` {
			return litequeue.Permanent(errors.New("bad address"))
		}
		return errors.New("try later")
	})
	ctx := t.Context()
	for _, p := range []string{"bad", "later"} {
		if _, err := q.Enqueue(ctx, "send", p, litequeue.OnQueue("mail")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Enqueue(ctx, "render", nil, litequeue.OnQueue("pdf")); err != nil {
		t.Fatal(err)
	}
	clk.Add(90 * time.Second) // the retry (after at most 2s) and the render are due

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(prom.NewCollector(q))
	want := `
# HELP litequeue_deaths_last_hour Jobs that went dead in the last hour.
# TYPE litequeue_deaths_last_hour gauge
litequeue_deaths_last_hour{error_class="*errors.errorString",kind="send"} 1
# HELP litequeue_jobs Jobs by queue and state; pending jobs are due or scheduled.
# TYPE litequeue_jobs gauge
litequeue_jobs{queue="mail",state="cancelled"} 0
litequeue_jobs{queue="mail",state="completed"} 0
litequeue_jobs{queue="mail",state="dead"} 1
litequeue_jobs{queue="mail",state="discarded"} 0
litequeue_jobs{queue="mail",state="due"} 1
litequeue_jobs{queue="mail",state="expired"} 0
litequeue_jobs{queue="mail",state="running"} 0
litequeue_jobs{queue="mail",state="scheduled"} 0
litequeue_jobs{queue="pdf",state="cancelled"} 0
litequeue_jobs{queue="pdf",state="completed"} 0
litequeue_jobs{queue="pdf",state="dead"} 0
litequeue_jobs{queue="pdf",state="discarded"} 0
litequeue_jobs{queue="pdf",state="due"} 1
litequeue_jobs{queue="pdf",state="expired"} 0
litequeue_jobs{queue="pdf",state="running"} 0
litequeue_jobs{queue="pdf",state="scheduled"} 0
# HELP litequeue_oldest_due_seconds How long the oldest due job of the queue has been due.
# TYPE litequeue_oldest_due_seconds gauge
litequeue_oldest_due_seconds{queue="mail"} 89
litequeue_oldest_due_seconds{queue="pdf"} 90
# HELP litequeue_retries_last_hour Failed runs retried in the last hour.
# TYPE litequeue_retries_last_hour gauge
litequeue_retries_last_hour{error_class="*errors.errorString",kind="send"} 1
# HELP litequeue_unhandled_kinds Kinds with due jobs and no handler on this Queue.
# TYPE litequeue_unhandled_kinds gauge
litequeue_unhandled_kinds{kind="render"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// TestCollector_Closed scrapes a closed queue: the scrape reports the
// error instead of figures.
func TestCollector_Closed(t *testing.T) {
	t.Parallel()
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(prom.NewCollector(q))
	if _, err := reg.Gather(); !errors.Is(err, litequeue.ErrClosed) {
		t.Errorf("Gather of a closed queue: %v, want ErrClosed", err)
	}
}

// TestCoreLinksNoClientGolang lists what a program of the core alone
// links (examples/schedule): none of client_golang, which only this
// package brings in.
func TestCoreLinksNoClientGolang(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/litequeue/litequeue/examples/schedule").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/prometheus/") || strings.HasPrefix(pkg, "github.com/litequeue/litequeue/prom") {
			t.Errorf("examples/schedule links %s", pkg)
		}
	}
}
