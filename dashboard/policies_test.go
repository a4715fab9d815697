package dashboard_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// recordedBy is how the policies page says that this process recorded a
// policy at the flow's epoch, 3 minutes before its clock.
func recordedBy() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("Recorded by %s pid %d at 2026-03-01 09:00:00Z (3m ago).", host, os.Getpid())
}

// TestPolicies_Recorded: the policies page shows the policy that the
// flow's worker recorded, saying who recorded it and when, and its kinds
// with their policy, timeout and flow control, on the file and on a
// server; the policies given to the dashboard come after, marked as
// given; the library's defaults are not offered as the app's.
func TestPolicies_Recorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		payments := litequeue.Policy{Backoff: litequeue.Linear, Base: 5 * time.Second, Ceiling: time.Minute, MaxTries: 4, Jitter: litequeue.NoJitter}
		_, body := get(t, f.server(t, dashboard.Options{Policies: map[string]litequeue.Policy{"payments": payments}}).URL+"/policies")
		contains(t, "the policies page", body,
			`<h2>default</h2>
<p>exponential from 2s, capped at 15m, 8 tries, full jitter.</p>
<p class="source">`+recordedBy()+`</p>`,
			`<h2>payments</h2>
<p>linear from 5s, capped at 1m, 4 tries, none jitter.</p>
<p class="source">Given to this dashboard`,
			`<tr data-kind="sync.push"><td>sync.push</td><td>default</td><td>–</td><td>breaker at 2 failures in 1m (50% of runs), open 5m to 10m</td><td>`+recordedBy()+`</td></tr>`,
			`<tr data-kind="thumb.make"><td>thumb.make</td><td>default</td><td>2m</td><td>at most 3 running, 10 starts per 1m</td>`,
			`<tr data-kind="report.build"><td>report.build</td><td>default</td><td>–</td><td>–</td>`)
		if i, j := strings.Index(body, "<h2>default</h2>"), strings.Index(body, "<h2>payments</h2>"); i > j {
			t.Error("the policy given to the dashboard comes before the recorded one")
		}
		if strings.Contains(body, "library's defaults") {
			t.Error("the page offers the library's defaults beside the recorded policies")
		}
	})
}

// TestPolicies_NothingRecorded: on a database where no worker ran, the
// page shows the library's default policy and says that no app recorded
// it, on the file and on a server; the policies given to the dashboard
// take its place.
func TestPolicies_NothingRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		q := b.open(t)(litequeue.Options{Clock: clock.NewMock()})
		srv := httptest.NewServer(dashboard.New(q, dashboard.Options{}))
		t.Cleanup(srv.Close)
		_, body := get(t, srv.URL+"/policies")
		contains(t, "the policies page", body, `<h2>default</h2>
<p>exponential from 2s, capped at 15m, 8 tries, full jitter.</p>
<p class="source">The library&#39;s defaults, not recorded by any app: no worker has recorded its policies in this database`)
		if strings.Contains(body, `id="kinds"`) {
			t.Error("the page shows kinds where none is recorded")
		}
		given := httptest.NewServer(dashboard.New(q, dashboard.Options{Policies: map[string]litequeue.Policy{"default": litequeue.DefaultPolicy()}}))
		t.Cleanup(given.Close)
		_, body = get(t, given.URL+"/policies")
		contains(t, "the policies page with policies given", body, `<p class="source">Given to this dashboard`)
		if strings.Contains(body, "library&#39;s defaults") {
			t.Error("the page shows the library's defaults beside the policies given to it")
		}
	})
}
