package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// recordApp opens db, a file's path or a server's URL, as an app with a
// named policy and two kinds, runs its worker once, which records them,
// and closes it.
func recordApp(t *testing.T, db string, at time.Time) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(at)
	opts := litequeue.Options{Clock: clk,
		Retry:    litequeue.Policy{MaxTries: 5},
		Policies: map[string]litequeue.Policy{"payments": {Backoff: litequeue.Linear, Base: 30 * time.Second, MaxTries: 10}}}
	var q *litequeue.Queue
	var err error
	if isServerURL(db) {
		q, err = postgres.Open(t.Context(), db, opts)
	} else {
		q, err = litequeue.Open(db, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ok := func(context.Context, *litequeue.Job) error { return nil }
	q.Handle("charge", ok, litequeue.UsePolicy("payments"), litequeue.WithTimeout(30*time.Second), litequeue.MaxRunning(4))
	q.Handle("resize", ok, litequeue.WithBreaker(litequeue.Breaker{Failures: 5}))
	if _, err := q.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// backendDBs are a new file and, where a server is given, a new database
// on it.
func backendDBs(t *testing.T) map[string]string {
	dbs := map[string]string{"file": filepath.Join(t.TempDir(), "app.db")}
	if os.Getenv("LITEQUEUE_TEST_POSTGRES") != "" {
		dbs["server"] = pgtest.DSN(t)
	}
	return dbs
}

// TestPolicy_Recorded: without --config, "policy" shows the policies the
// app's worker recorded, on the file and on a server, saying who recorded
// them and when, with the kinds under the default policy; a named policy
// of the app is found, one it does not have is refused naming those it
// recorded; --json says the source too. With --config it shows the
// config's, saying so, whatever the app recorded. Before any worker ran,
// it shows the library's defaults, saying that no app recorded any.
func TestPolicy_Recorded(t *testing.T) {
	at := epoch.Add(-time.Hour)
	host, _ := os.Hostname()
	when := "at 2026-03-02T08:30:00.000Z (host " + host + ", pid "
	by := "recorded by the app " + when
	for backend, db := range backendDBs(t) {
		t.Run(backend, func(t *testing.T) {
			recordApp(t, db, at)
			c := func() *cli { c := testCLI(""); c.db = db; return c }

			out := mustRun(t, c(), "policy").stdout
			for _, want := range []string{
				"policy default: exponential from 2s, capped at 15m, 5 tries, full jitter\n" + by,
				"kinds, as the app's workers recorded them:\n",
				"charge  payments  30s      at most 4 running",
				"resize  default   -        breaker at 5 failures in 1m (50% of runs), open 30s to 10m  " + when,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("policy does not say %q:\n%s", want, out)
				}
			}
			out = mustRun(t, c(), "policy", "payments").stdout
			if want := "policy payments: linear from 30s, capped at 15m, 10 tries, full jitter\n" + by; !strings.HasPrefix(out, want) || strings.Contains(out, "kinds") {
				t.Errorf("policy payments does not begin with %q, without the kinds:\n%s", want, out)
			}
			r := runCLI(t, c(), "policy", "billing")
			if want := `unknown policy "billing" (the app recorded default, payments)`; r.code != exitUsage || !strings.Contains(r.stderr, want) {
				t.Errorf("policy billing: exit %d, stderr %q; want 2 and %q", r.code, r.stderr, want)
			}

			var js policyJSON
			if err := json.Unmarshal([]byte(mustRun(t, c(), "policy", "--json").stdout), &js); err != nil {
				t.Fatal(err)
			}
			if js.Source != "recorded" || js.RecordedAtMS != at.UnixMilli() || js.Host != host || js.PID != os.Getpid() || js.MaxTries != 5 {
				t.Errorf("policy --json = %+v, want recorded at %d by this process, 5 tries", js, at.UnixMilli())
			}
			want := []kindJSON{
				{Kind: "charge", Policy: "payments", TimeoutMS: 30000, MaxRunning: 4, RecordedAtMS: at.UnixMilli(), Host: host, PID: os.Getpid()},
				{Kind: "resize", Policy: "default", Breaker: "breaker at 5 failures in 1m (50% of runs), open 30s to 10m",
					RecordedAtMS: at.UnixMilli(), Host: host, PID: os.Getpid()},
			}
			if diff := cmp.Diff(want, js.Kinds); diff != "" {
				t.Errorf("policy --json kinds (-want +got):\n%s", diff)
			}

			cfg := c()
			cfg.config = "testdata/litequeue.toml"
			out = mustRun(t, cfg, "policy", "payments").stdout
			if want := "policy payments: linear from 30s, capped at 10m, 10 tries, equal jitter\nfrom the config testdata/litequeue.toml\n"; !strings.HasPrefix(out, want) {
				t.Errorf("policy payments --config does not begin with %q:\n%s", want, out)
			}
			js = policyJSON{}
			if err := json.Unmarshal([]byte(mustRun(t, cfg, "policy", "--json").stdout), &js); err != nil {
				t.Fatal(err)
			}
			if js.Source != "config" || js.Config != "testdata/litequeue.toml" || js.Host != "" || len(js.Kinds) != 0 {
				t.Errorf("policy --json --config = %+v, want the config's, nothing recorded", js)
			}
		})
	}
}

// TestPolicy_NothingRecorded: on a database where no worker ran, "policy"
// shows the library's defaults, and says that no app recorded any.
func TestPolicy_NothingRecorded(t *testing.T) {
	for backend, db := range backendDBs(t) {
		t.Run(backend, func(t *testing.T) {
			c := testCLI("")
			c.db = db
			mustRun(t, c, "migrate") // the tables, and no worker
			c = testCLI("")
			c.db = db
			out := mustRun(t, c, "policy").stdout
			want := "policy default: exponential from 2s, capped at 15m, 8 tries, full jitter\n" +
				"the library's defaults, not recorded by any app: no app has recorded its policies in "
			if !strings.HasPrefix(out, want) {
				t.Errorf("policy does not begin with %q:\n%s", want, out)
			}
		})
	}
}
