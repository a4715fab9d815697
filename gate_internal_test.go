package litequeue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLockOrder_SortedOnce checks the order in which a claim locks the kinds
// it counts: every kind once, sorted by name whatever part of the gate asked
// for it, so that two transactions never hold one kind each while waiting
// for the other's.
func TestLockOrder_SortedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		limited, probes []string
		want            []string
	}{
		{name: "none"},
		{name: "limits only", limited: []string{"a", "c"}, want: []string{"a", "c"}},
		{name: "probe before a limit", limited: []string{"b", "d"}, probes: []string{"a", "c"}, want: []string{"a", "b", "c", "d"}},
		{name: "kind in both", limited: []string{"mail"}, probes: []string{"zip", "mail"}, want: []string{"mail", "zip"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, lockOrder(tc.limited, tc.probes)); diff != "" {
				t.Errorf("lockOrder(%v, %v) (-want +got):\n%s", tc.limited, tc.probes, diff)
			}
		})
	}
}
