package dashboard_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// TestMetrics_NoHandlers scrapes the demo's file through the dashboard of
// a Queue with no handlers, as litequeue serve opens it: the figures of
// the file are there, and no kind is flagged as unhandled, which every
// kind with due jobs would be.
func TestMetrics_NoHandlers(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	q, err := litequeue.OpenReadOnly(d.path, litequeue.Options{Clock: d.clk})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	srv := httptest.NewServer(dashboard.New(q, dashboard.Options{Clock: d.clk}))
	defer srv.Close()
	code, body := get(t, srv.URL+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	contains(t, "the metrics", body, `litequeue_jobs{queue="billing",state="due"} 3`)
	if strings.Contains(body, "litequeue_unhandled_kinds{") {
		t.Errorf("the metrics of a Queue without handlers flag unhandled kinds:\n%s", body)
	}
}
