package prom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/prom"
)

// openMock opens a queue on a new file, on a mock clock at 2026-03-01
// 09:00 UTC and without jitter, and closes it at the end of the test.
func openMock(t *testing.T) (*litequeue.Queue, *clock.Mock) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{Clock: clk, Rand: func() float64 { return 0.5 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q, clk
}

// TestCollector scrapes a queue with a job in each state that matters, a
// waiting one among them, and a retry and a death in the last hour, on a
// mock clock.
func TestCollector(t *testing.T) {
	t.Parallel()
	q, clk := openMock(t)
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
	render, err := q.Enqueue(ctx, "render", nil, litequeue.OnQueue("pdf"))
	if err != nil {
		t.Fatal(err)
	}
	// The upload waits for the render.
	if _, err := q.Enqueue(ctx, "upload", nil, litequeue.OnQueue("pdf"), litequeue.DependsOn(render.ID)); err != nil {
		t.Fatal(err)
	}
	clk.Add(90 * time.Second) // the retry (after at most 2s) and the render are due

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(prom.NewCollector(q))
	want := `
# HELP litequeue_build_info Always 1: the version of litequeue, and of Go, that the program was built with.
# TYPE litequeue_build_info gauge
litequeue_build_info{goversion="` + runtime.Version() + `",version="(devel)"} 1
# HELP litequeue_deaths_last_hour Jobs that went dead in the last hour.
# TYPE litequeue_deaths_last_hour gauge
litequeue_deaths_last_hour{error_class="*errors.errorString",kind="send"} 1
# HELP litequeue_jobs Jobs by queue and state; pending jobs are due or scheduled, waiting ones wait for their dependencies.
# TYPE litequeue_jobs gauge
litequeue_jobs{queue="mail",state="cancelled"} 0
litequeue_jobs{queue="mail",state="completed"} 0
litequeue_jobs{queue="mail",state="dead"} 1
litequeue_jobs{queue="mail",state="discarded"} 0
litequeue_jobs{queue="mail",state="due"} 1
litequeue_jobs{queue="mail",state="expired"} 0
litequeue_jobs{queue="mail",state="running"} 0
litequeue_jobs{queue="mail",state="scheduled"} 0
litequeue_jobs{queue="mail",state="waiting"} 0
litequeue_jobs{queue="pdf",state="cancelled"} 0
litequeue_jobs{queue="pdf",state="completed"} 0
litequeue_jobs{queue="pdf",state="dead"} 0
litequeue_jobs{queue="pdf",state="discarded"} 0
litequeue_jobs{queue="pdf",state="due"} 1
litequeue_jobs{queue="pdf",state="expired"} 0
litequeue_jobs{queue="pdf",state="running"} 0
litequeue_jobs{queue="pdf",state="scheduled"} 0
litequeue_jobs{queue="pdf",state="waiting"} 1
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

// TestCollector_BadNames scrapes, over HTTP, a registry of the app's own
// metric and the collector of a file whose jobs and history carry a kind
// and a queue that are not valid UTF-8, written with raw SQL as an older
// version or the app could have: each scrape answers 200 with the app's
// metric and every good series, without the bad ones, and each bad value
// is logged once.
func TestCollector_BadNames(t *testing.T) {
	t.Parallel()
	q, clk := openMock(t)
	q.Handle("send", func(ctx context.Context, job *litequeue.Job) error { return errors.New("try later") })
	ctx := t.Context()
	for _, kind := range []string{"send", "send", "render"} {
		if _, err := q.Enqueue(ctx, kind, nil, litequeue.OnQueue("mail")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.RunDue(ctx); err != nil { // two retries of send in the history
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE litequeue_jobs SET kind = 'send' || x'ff', queue = 'mail' || x'fe' WHERE id = 1`,
		`UPDATE litequeue_attempts SET kind = 'send' || x'ff' WHERE job_id = 1`,
		`UPDATE litequeue_jobs SET kind = 'render' || x'c3' WHERE id = 3`,
	} {
		if _, err := q.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	// The app's own SQL goes uncounted on a file: a recount counts it.
	if _, err := q.RecountJobs(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)

	reg := prometheus.NewRegistry()
	app := prometheus.NewCounter(prometheus.CounterOpts{Name: "app_requests_total", Help: "The app's own."})
	app.Add(3)
	c := prom.NewCollector(q)
	var logs bytes.Buffer
	c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	reg.MustRegister(app, c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	for range 2 {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("scrape: %s\n%s", resp.Status, body)
		}
		for _, want := range []string{
			"app_requests_total 3\n",
			`litequeue_jobs{queue="mail",state="due"} 2` + "\n",
			`litequeue_retries_last_hour{error_class="*errors.errorString",kind="send"} 1` + "\n",
		} {
			if !bytes.Contains(body, []byte(want)) {
				t.Errorf("scrape lacks %q:\n%s", want, body)
			}
		}
		if !utf8.Valid(body) || bytes.Contains(body, []byte("render")) || bytes.Count(body, []byte("litequeue_retries_last_hour{")) != 1 {
			t.Errorf("scrape has a series of a bad name:\n%s", body)
		}
	}
	var logged []string
	for line := range strings.Lines(logs.String()) {
		var rec struct{ Level, Err string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		logged = append(logged, rec.Level+" "+rec.Err)
	}
	slices.Sort(logged)
	want := []string{
		`WARN label value "mail\xfe" is not valid UTF-8`,
		`WARN label value "render\xc3" is not valid UTF-8`,
		`WARN label value "send\xff" is not valid UTF-8`,
	}
	if diff := cmp.Diff(want, logged); diff != "" {
		t.Errorf("logs of two scrapes (-want +got):\n%s", diff)
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
