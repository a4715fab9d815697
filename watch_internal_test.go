package litequeue

import (
	"testing"
	"time"
)

// TestWatch_Poll: with the notifier running, a loop looks every
// pollInterval for recentChange after the file last changed (a commit
// becomes readable only after its fsync, which may end after the notifier
// stopped asking), and every notifiedPoll once the file has been quiet
// that long; without a notifier, every pollInterval.
func TestWatch_Poll(t *testing.T) {
	t.Parallel()
	n := &notifier{}
	w := &watch{n: n, polls: [2]time.Duration{pollInterval, notifiedPoll}}
	if got := w.poll(); got != pollInterval {
		t.Errorf("without a running notifier: poll %v, want %v", got, pollInterval)
	}
	n.up.Store(true)
	for _, tt := range []struct {
		ago  time.Duration
		want time.Duration
	}{
		{0, pollInterval},
		{recentChange - time.Second, pollInterval},
		{recentChange + time.Second, notifiedPoll},
	} {
		n.changed.Store(time.Now().Add(-tt.ago).UnixNano())
		if got := w.poll(); got != tt.want {
			t.Errorf("the file changed %v ago: poll %v, want %v", tt.ago, got, tt.want)
		}
	}
}
