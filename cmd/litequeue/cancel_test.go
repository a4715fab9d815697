package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

func TestCancel(t *testing.T) {
	fx := newFixture(t)
	q := openFixture(t, fx)
	r := mustRun(t, fx.cli(""), "cancel", fmt.Sprint(fx.scheduled), fmt.Sprint(fx.waiting))
	if got, want := r.stdout, fmt.Sprintf("cancelled job %d\ncancelled job %d\n", fx.scheduled, fx.waiting); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, id := range []int64{fx.scheduled, fx.waiting} {
		if got := state(t, q, id); got != litequeue.Cancelled {
			t.Errorf("job %d is %s, want cancelled", id, got)
		}
	}
	r = runCLI(t, fx.cli(""), "cancel", fmt.Sprint(fx.sent), "999", fmt.Sprint(fx.unhandled))
	if r.code != exitFailure {
		t.Errorf("exit %d, want 1", r.code)
	}
	for _, want := range []string{fmt.Sprintf("cancel job %d: it is completed", fx.sent), "no job 999"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q does not say %q", r.stderr, want)
		}
	}
	if got := state(t, q, fx.unhandled); got != litequeue.Cancelled {
		t.Errorf("job %d is %s, want cancelled after the errors before it", fx.unhandled, got)
	}
}
