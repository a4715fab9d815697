package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
)

func TestRunNow(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	now := epoch.Add(time.Minute) // the cli's clock
	r := mustRun(t, fx.cli(""), "run-now", fmt.Sprint(fx.scheduled), fmt.Sprint(fx.waiting))
	if got, want := r.stdout, fmt.Sprintf("job %d is due now\njob %d is due now\n", fx.scheduled, fx.waiting); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, id := range []int64{fx.scheduled, fx.waiting} {
		j, err := q.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		h, err := q.History(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != litequeue.Pending || !j.RunAt.Equal(now) || len(h) == 0 || h[len(h)-1].Outcome != litequeue.OutcomeRunNow {
			t.Errorf("job %d after run-now: %s due %v, history %+v; want pending, due %v, a run_now row last", id, j.State, j.RunAt, h, now)
		}
	}
	if got := mustRun(t, fx.cli(""), "show", fmt.Sprint(fx.waiting)).stdout; !strings.Contains(got, "run_now") {
		t.Errorf("show does not list the run_now row:\n%s", got)
	}
}

func TestRunNow_Refuses(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	r := runCLI(t, fx.cli(""), "run-now", fmt.Sprint(fx.sent), "999", fmt.Sprint(fx.bounced), fmt.Sprint(fx.discarded))
	if r.code != exitFailure || r.stdout != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
	}
	for _, want := range []string{
		fmt.Sprintf("run now job %d: it is completed", fx.sent),
		"no job 999",
		fmt.Sprintf("run now job %d: it is dead", fx.bounced),
		fmt.Sprintf("run now job %d: it is discarded", fx.discarded),
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
	for id, want := range map[int64]litequeue.State{fx.sent: litequeue.Completed, fx.bounced: litequeue.Dead, fx.discarded: litequeue.Discarded} {
		if got := state(t, q, id); got != want {
			t.Errorf("job %d is %s, want still %s", id, got, want)
		}
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"run-now"}, "missing arguments"},
		{[]string{"run-now", "1", "x"}, `job ID "x" is not a positive whole number`},
	} {
		r := runCLI(t, fx.cli(""), tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.says)
		}
	}
}
