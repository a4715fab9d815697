package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

func TestDelete(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	ctx := context.Background()
	rows := historyRows(t, q)
	for _, id := range []int64{fx.sent, fx.bounced} {
		h, err := q.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rows -= len(h)
	}
	r := mustRun(t, fx.cli(""), "delete", fmt.Sprint(fx.sent), fmt.Sprint(fx.bounced))
	if got, want := r.stdout, fmt.Sprintf("deleted job %d and its history\ndeleted job %d and its history\n", fx.sent, fx.bounced); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, id := range []int64{fx.sent, fx.bounced} {
		if _, err := q.Get(ctx, id); !errors.Is(err, litequeue.ErrNotFound) {
			t.Errorf("Get(%d) after delete: %v, want ErrNotFound", id, err)
		}
	}
	if got := historyRows(t, q); got != rows {
		t.Errorf("%d history rows after delete, want %d: those of the other jobs", got, rows)
	}
	if got := state(t, q, fx.broken); got != litequeue.Dead {
		t.Errorf("job %d is %s, want still dead", fx.broken, got)
	}
}

// historyRows returns the rows of history of every job in q's file.
func historyRows(t *testing.T, q *litequeue.Queue) int {
	t.Helper()
	h, err := q.Health(context.Background())
	if err != nil || h.HistoryRows < 0 {
		t.Fatalf("count history rows: %v, %q", err, h.Problems)
	}
	return h.HistoryRows
}

func TestDelete_Refuses(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	r := runCLI(t, fx.cli(""), "delete", fmt.Sprint(fx.scheduled), "999", fmt.Sprint(fx.discarded))
	if r.code != exitFailure {
		t.Errorf("exit %d, want 1", r.code)
	}
	for _, want := range []string{fmt.Sprintf("delete job %d: it is pending (cancel it first)", fx.scheduled), "no job 999"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
	if got := state(t, q, fx.scheduled); got != litequeue.Pending {
		t.Errorf("job %d is %s, want still pending", fx.scheduled, got)
	}
	if _, err := q.Get(context.Background(), fx.discarded); !errors.Is(err, litequeue.ErrNotFound) {
		t.Errorf("job %d after the errors before it: %v, want deleted", fx.discarded, err)
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"delete"}, "missing job IDs (or --all)"},
		{[]string{"delete", "0"}, `job ID "0" is not a positive whole number`},
	} {
		r := runCLI(t, fx.cli(""), tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.says)
		}
	}
}
