package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// TestExpired shows an expired job: "list --state expired" lists it,
// "show" gives its expiry and its history row, and "stats" counts it.
func TestExpired(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	clk := clock.NewMock()
	clk.Set(epoch)
	q, err := litequeue.Open(path, litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	late, err := q.Enqueue(t.Context(), "sms.code", "1234", litequeue.ExpireAfter(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Enqueue(t.Context(), "sms.code", "5678"); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	if _, err := q.RunDue(t.Context()); err != nil { // its janitor expires the first
		t.Fatal(err)
	}
	q.Close()
	c := testCLI("")
	c.db, c.clock = path, clk

	r := mustRun(t, c, "list", "--state", "expired")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], fmt.Sprint(late.ID)+" ") || !strings.Contains(lines[1], "expired") {
		t.Errorf("list --state expired:\n%s\nwant a header and job %d, expired", r.stdout, late.ID)
	}
	r = mustRun(t, c, "show", fmt.Sprint(late.ID))
	for _, want := range []string{"state       expired\n", "expires     2026-03-02T09:31:00.000Z\n", "0s    expired"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("show does not say %q:\n%s", want, r.stdout)
		}
	}
	r = mustRun(t, c, "stats", "--json")
	var st statsJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if qs := st.Queues[litequeue.DefaultQueue]; qs.Expired != 1 || qs.Due != 1 {
		t.Errorf("stats --json: %+v, want 1 expired and 1 due", qs)
	}
	if r := mustRun(t, c, "stats"); !strings.Contains(r.stdout, "EXPIRED") {
		t.Errorf("stats has no EXPIRED column:\n%s", r.stdout)
	}
	if r := runCLI(t, c, "list", "--state", "gone"); r.code == exitOK || !strings.Contains(r.stderr, "cancelled or expired") {
		t.Errorf("list --state gone: exit %d, stderr %q; want an error naming expired among the states", r.code, r.stderr)
	}
}
