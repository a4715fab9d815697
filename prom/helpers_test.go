package prom_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// start is when the mock clocks of the tests start: 2026-03-01 09:00 UTC.
var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// backends runs test on a new file and on a new database of the
// PostgreSQL server (skipped without one: see pgtest), each on a mock
// clock at start. Each call of open opens a Queue with opts, on the mock
// clock and without jitter, on that one file or database, and closes it
// at the end of the test.
func backends(t *testing.T, test func(t *testing.T, clk *clock.Mock, open func(opts litequeue.Options) *litequeue.Queue)) {
	t.Helper()
	for _, backend := range []string{"file", "server"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			clk := clock.NewMock()
			clk.Set(start)
			var where string // the file's path or the server's DSN
			if backend == "file" {
				where = filepath.Join(t.TempDir(), "q.db")
			} else {
				where = pgtest.DSN(t)
			}
			test(t, clk, func(opts litequeue.Options) *litequeue.Queue {
				t.Helper()
				opts.Clock, opts.Rand = clk, func() float64 { return 0.5 }
				var q *litequeue.Queue
				var err error
				if backend == "file" {
					q, err = litequeue.Open(where, opts)
				} else {
					q, err = postgres.Open(t.Context(), where, opts)
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { q.Close() })
				return q
			})
		})
	}
}

// serve serves the registry of cs over HTTP, as an app would, until the
// end of the test.
func serve(t *testing.T, cs ...prometheus.Collector) *httptest.Server {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(cs...)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	t.Cleanup(srv.Close)
	return srv
}

// scrape GETs url, lints what it answers with promlint, and returns its
// series, each as the text format writes it (name{labels}), with its
// value. It does not fail a test, so that a handler may scrape: what
// went wrong is in the error.
func scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape: %s\n%s", resp.Status, body)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("promlint: %v", problems)
	}
	series := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("scrape: line %q: %w", line, err)
		}
		series[line[:i]] = v
	}
	return series, nil
}

// mustScrape is scrape for the test's goroutine: it fails the test on an
// error.
func mustScrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	series, err := scrape(url)
	if err != nil {
		t.Fatal(err)
	}
	return series
}

// only returns the series of series whose names begin with one of
// prefixes.
func only(series map[string]float64, prefixes ...string) map[string]float64 {
	out := map[string]float64{}
	for name, v := range series {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				out[name] = v
			}
		}
	}
	return out
}

// unix is t in seconds since the Unix epoch, as the gauges of times say
// it.
func unix(t time.Time) float64 { return float64(t.UnixMilli()) / 1e3 }
