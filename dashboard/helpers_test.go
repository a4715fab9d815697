package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// epoch is where the tests' mock clocks start: on a whole minute.
var epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// The demo's hostile values: each must show as text, never as markup.
const (
	xssPayload = `<script>alert(1)</script>`
	xssError   = `<img src=x onerror="alert(2)"><b>bounced</b>`
	xssKind    = `<i>kind</i>`
	xssQueue   = `<u>queue</u>`
)

// smtpError is a mail server's refusal, for an error class of its own.
type smtpError struct{ code int }

func (e *smtpError) Error() string { return fmt.Sprintf("smtp: %d mailbox unavailable", e.code) }

// demo is a queue file as an operator finds it after an hour of work: jobs
// on two queues, retries and deaths in every minute, and a dead job of
// each hostile value.
type demo struct {
	q      *litequeue.Queue
	clk    *clock.Mock
	path   string
	dead   *litequeue.Job // an email that died with xssError
	report *litequeue.Job // the newest report, dead after three failed runs
	xss    *litequeue.Job // the job whose payload is xssPayload, dead
	later  *litequeue.Job // a pending job due in an hour
}

// newDemo makes the demo on a mock clock: for 60 minutes, each minute an
// email that succeeds and one that fails once then succeeds; every ten
// minutes an email and a report that die; in the last quarter hour
// invoices that no handler runs; then the hostile jobs.
func newDemo(tb testing.TB) *demo {
	tb.Helper()
	clk := clock.NewMock()
	clk.Set(epoch)
	path := filepath.Join(tb.TempDir(), "demo.db")
	q, err := litequeue.Open(path, litequeue.Options{Clock: clk, Rand: func() float64 { return 0.5 },
		Retry: litequeue.Policy{Base: 10 * time.Second, MaxTries: 3}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { q.Close() })
	d := &demo{q: q, clk: clk, path: path}
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
		var to string
		job.Decode(&to)
		switch {
		case strings.HasSuffix(to, "@old-mail.example"):
			return litequeue.Permanent(&smtpError{550})
		case strings.HasPrefix(to, "flaky") && job.Attempt == 1:
			return &smtpError{421}
		case to == "hostile":
			return litequeue.Permanent(errors.New(xssError))
		}
		return nil
	})
	q.Handle("report.build", func(ctx context.Context, job *litequeue.Job) error {
		return errors.New("dial tcp 10.0.0.7:5432: connect: connection refused")
	}, litequeue.WithTimeout(time.Minute))
	q.Handle(xssKind, func(ctx context.Context, job *litequeue.Job) error {
		return litequeue.Permanent(errors.New(xssError))
	})
	ctx := context.Background()
	enqueue := func(kind string, payload any, opts ...litequeue.EnqueueOption) *litequeue.Job {
		tb.Helper()
		j, err := q.Enqueue(ctx, kind, payload, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		return j
	}
	emails := litequeue.OnQueue("emails")
	for m := range 60 {
		enqueue("email.send", fmt.Sprintf("user%d@example.com", m), emails)
		enqueue("email.send", fmt.Sprintf("flaky%d@example.com", m), emails)
		if m >= 45 && m%5 == 0 { // no handler runs them: due, and waiting
			enqueue("invoice.render", map[string]any{"invoice": 1000 + m}, litequeue.OnQueue("billing"))
		}
		if m%10 == 0 {
			enqueue("email.send", fmt.Sprintf("user%d@old-mail.example", m), emails)
			d.report = enqueue("report.build", map[string]any{"month": "2026-02", "n": m}, litequeue.OnQueue("reports"))
		}
		if _, err := q.RunDue(ctx); err != nil {
			tb.Fatal(err)
		}
		clk.Add(time.Minute - 20*time.Second)
		if _, err := q.RunDue(ctx); err != nil { // the retries, due after 10s
			tb.Fatal(err)
		}
		clk.Add(20 * time.Second)
	}
	d.dead = enqueue("email.send", "hostile", emails)
	d.xss = enqueue(xssKind, json.RawMessage(xssPayload), litequeue.OnQueue(xssQueue), litequeue.Metadata(xssKind, xssError))
	if _, err := q.RunDue(ctx); err != nil {
		tb.Fatal(err)
	}
	d.later = enqueue("email.send", "later@example.com", emails, litequeue.Delay(time.Hour))
	return d
}

// newQueue opens a queue on an empty file, closed at the end of the test.
func newQueue(tb testing.TB) *litequeue.Queue {
	tb.Helper()
	q, err := litequeue.Open(filepath.Join(tb.TempDir(), "empty.db"), litequeue.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { q.Close() })
	return q
}

// server serves the demo's dashboard with opts, on a test server.
func (d *demo) server(tb testing.TB, opts dashboard.Options) *httptest.Server {
	tb.Helper()
	opts.Clock = d.clk
	srv := httptest.NewServer(dashboard.New(d.q, opts))
	tb.Cleanup(srv.Close)
	return srv
}

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// get fetches url and returns its status and body.
func get(tb testing.TB, url string) (int, string) {
	tb.Helper()
	return do(tb, http.MethodGet, url, nil, nil)
}

// post posts the form to url and returns its status and body, without
// following a redirect.
func post(tb testing.TB, url string, form url.Values) (int, string) {
	tb.Helper()
	return postWith(tb, url, form, nil)
}

// postWith is post with the headers h.
func postWith(tb testing.TB, url string, form url.Values, h http.Header) (int, string) {
	tb.Helper()
	h = h.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(tb, http.MethodPost, url, strings.NewReader(form.Encode()), h)
}

// do sends one request with the headers h and returns its status and
// body. A Host in h is sent as the request's Host, as a browser on
// another name for the server would.
func do(tb testing.TB, method, url string, body io.Reader, h http.Header) (int, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if host := h.Get("Host"); host != "" {
		req.Host = host
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token from a page's form.
func csrf(tb testing.TB, page string) string {
	tb.Helper()
	m := csrfRE.FindStringSubmatch(page)
	if m == nil {
		tb.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

// stateOf reads a job's state.
func stateOf(tb testing.TB, q *litequeue.Queue, id int64) litequeue.State {
	tb.Helper()
	j, err := q.Get(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return j.State
}

// itoa formats an ID for a URL.
func itoa(id int64) string { return strconv.FormatInt(id, 10) }
