package litequeue_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestPolicy_Schedule(t *testing.T) {
	t.Parallel()
	want := []litequeue.ScheduleStep{
		{Retry: 1, MaxWait: 2 * time.Second, Total: 2 * time.Second},
		{Retry: 2, MaxWait: 4 * time.Second, Total: 6 * time.Second},
		{Retry: 3, MaxWait: 8 * time.Second, Total: 14 * time.Second},
		{Retry: 4, MaxWait: 16 * time.Second, Total: 30 * time.Second},
		{Retry: 5, MaxWait: 32 * time.Second, Total: 62 * time.Second},
		{Retry: 6, MaxWait: 64 * time.Second, Total: 126 * time.Second},
		{Retry: 7, MaxWait: 128 * time.Second, Total: 254 * time.Second},
	}
	if diff := cmp.Diff(want, litequeue.DefaultPolicy().Schedule()); diff != "" {
		t.Errorf("DefaultPolicy().Schedule() mismatch (-want +got):\n%s", diff)
	}
}

func TestPolicy_ScheduleBounds(t *testing.T) {
	t.Parallel()
	p := litequeue.DefaultPolicy()
	p.MaxTries = 1
	if got := p.Schedule(); len(got) != 0 {
		t.Errorf("Schedule with one try: got %v, want no steps", got)
	}
	p.MaxTries = math.MaxInt // invalid: capped, not allocated
	if got, want := len(p.Schedule()), litequeue.MaxTriesLimit-1; got != want {
		t.Errorf("Schedule with MaxTries MaxInt: got %d steps, want %d", got, want)
	}
	p = litequeue.Policy{Backoff: litequeue.Constant, Base: math.MaxInt64, Ceiling: math.MaxInt64, MaxTries: 3}
	if got, want := p.Schedule()[1].Total, time.Duration(math.MaxInt64); got != want {
		t.Errorf("Schedule of MaxInt64 waits: total %v, want %v (saturated)", got, want)
	}
}

// TestPolicy_ScheduleDefault compares the default schedule, as the README
// and the litequeue command print it, with testdata/default_schedule.golden.
// go test -run TestPolicy_ScheduleDefault -update rewrites the file.
func TestPolicy_ScheduleDefault(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	writeSchedule(&buf, litequeue.DefaultPolicy())
	golden := filepath.Join("testdata", "default_schedule.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), buf.String()); diff != "" {
		t.Errorf("default schedule mismatch (-%s +got):\n%s", golden, diff)
	}
}

// TestPolicy_ScheduleREADME checks that the README shows the golden
// schedule.
func TestPolicy_ScheduleREADME(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "default_schedule.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, golden) {
		t.Errorf("README.md does not show the schedule of testdata/default_schedule.golden:\n%s", golden)
	}
}

// writeSchedule writes p's schedule as a table.
func writeSchedule(w io.Writer, p litequeue.Policy) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "retry\tmax wait\tworst case total")
	var total time.Duration
	for _, s := range p.Schedule() {
		fmt.Fprintf(tw, "%d\t%v\t%v\n", s.Retry, s.MaxWait, s.Total)
		total = s.Total
	}
	fmt.Fprintf(tw, "total\t%v\n", total)
	tw.Flush()
}
