package sqlite

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// TestWatch_Poll: with the notifier running, a loop looks every
// store.PollInterval for recentChange after the file last changed (a commit
// becomes readable only after its fsync, which may end after the notifier
// stopped asking), and every notifiedPoll once the file has been quiet
// that long; after the Queue's own writer let go of the file, every
// store.PollInterval for afterRelease only; without a notifier, every
// store.PollInterval.
func TestWatch_Poll(t *testing.T) {
	t.Parallel()
	n := &notifier{}
	w := &watch{n: n, polls: [2]time.Duration{store.PollInterval, notifiedPoll}}
	if got := w.Poll(); got != store.PollInterval {
		t.Errorf("without a running notifier: poll %v, want %v", got, store.PollInterval)
	}
	n.up.Store(true)
	for _, tt := range []struct {
		ago  time.Duration
		want time.Duration
	}{
		{0, store.PollInterval},
		{recentChange - time.Second, store.PollInterval},
		{recentChange + time.Second, notifiedPoll},
	} {
		n.changed.Store(time.Now().Add(-tt.ago).UnixNano())
		if got := w.Poll(); got != tt.want {
			t.Errorf("the file changed %v ago: poll %v, want %v", tt.ago, got, tt.want)
		}
	}
	n.changed.Store(0)
	for _, tt := range []struct {
		ago  time.Duration
		want time.Duration
	}{
		{0, store.PollInterval},
		{afterRelease - 100*time.Millisecond, store.PollInterval},
		{afterRelease + 100*time.Millisecond, notifiedPoll},
		{recentChange - time.Second, notifiedPoll},
	} {
		n.released.Store(time.Now().Add(-tt.ago).UnixNano())
		if got := w.Poll(); got != tt.want {
			t.Errorf("the writer let go of the file %v ago: poll %v, want %v", tt.ago, got, tt.want)
		}
	}
}

// TestNotifier_BusyWriter writes to a -wal every 200µs for half a second
// longer than settleMax, the events of a busy writer, which settle leaves
// queued between its asks: a commit that becomes visible during the burst
// wakes the loops, and so does one that becomes visible after the burst's
// last write, more than settleMax after its first (settle measures
// settleMax from the last event it took, queued or not).
func TestNotifier_BusyWriter(t *testing.T) {
	t.Parallel()
	path := notifiedFile(t)
	var version atomic.Int64
	woken := make(chan int64, 100)
	n, err := notify(path, func() (int64, error) { return version.Load(), nil }, store.NewWaker(func() { woken <- version.Load() }, nil), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	wal, err := os.OpenFile(path+"-wal", os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer wal.Close()
	writeBurst(t, wal, 200*time.Microsecond, func(i int) {
		if i == 100 {
			version.Store(1) // a commit, visible during the burst
		}
	})
	awaitVersion(t, woken, 1)
	version.Store(2) // visible after the burst, without another event
	awaitVersion(t, woken, 2)
}

// TestNotifier_NoRoom changes a -wal while the loop has no room for a job:
// the notifier neither asks data_version nor wakes the loop; it waits,
// watching nothing, until the loop says it is idle (a token the loop left
// before it filled up does not count), and then watches again and wakes
// it for the commit it had not asked about. Having been blind, it asks on
// as after an event, and wakes the loop for a commit that becomes visible
// later without any event.
func TestNotifier_NoRoom(t *testing.T) {
	t.Parallel()
	path := notifiedFile(t)
	var version, asked atomic.Int64
	var room atomic.Bool
	consulted := make(chan bool, 1000)
	woken := make(chan int64, 100)
	wk := store.NewWaker(func() { woken <- version.Load() }, func() bool { r := room.Load(); consulted <- r; return r })
	n, err := notify(path, func() (int64, error) { asked.Add(1); return version.Load(), nil }, wk, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	asked.Store(0) // notify's own first ask
	version.Store(1)
	wk.Idled() // the loop slept with room before, then filled up
	wal, err := os.OpenFile(path+"-wal", os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer wal.Close()
	deadline := time.After(10 * time.Second)
	select {
	case <-consulted:
	case v := <-woken:
		t.Fatalf("woken for version %d while the loop had no room", v)
	case <-deadline:
		t.Fatal("the notifier did not ask whether the loop has room in 10s")
	}
	waitWatching(t, n, 0)
	writeBurst(t, wal, 10*time.Millisecond, nil) // a blind spell longer than settleMax: unseen
	woke := time.Now()
	if got := asked.Load(); got != 0 {
		t.Errorf("data_version asked %d times while the loop had no room, want 0", got)
	}
	select {
	case v := <-woken:
		t.Fatalf("woken for version %d while the loop had no room", v)
	default:
	}
	room.Store(true)
	wk.Idled()
	for {
		select {
		case <-consulted:
		case v := <-woken:
			if v != 1 {
				t.Fatalf("woken for version %d, want 1", v)
			}
			waitWatching(t, n, 1)
			if noted := time.Unix(0, n.changed.Load()); noted.Before(woke) {
				t.Errorf("the last change noted came %v before the blind spell ended, want after: the file would soon count as quiet", woke.Sub(noted))
			}
			version.Store(2) // visible now, its frames written while blind
			select {
			case v := <-woken:
				if v != 2 {
					t.Fatalf("woken for version %d, want 2", v)
				}
			case <-deadline:
				t.Fatal("no wake-up for a commit that became visible after the blind spell")
			}
			return
		case <-deadline:
			t.Fatal("no wake-up once the loop was idle")
		}
	}
}

// waitWatching waits until n watches want paths.
func waitWatching(t *testing.T, n *notifier, want int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("the notifier to watch %d paths", want), func() bool { return watches(t, n) == want })
}

// writeBurst writes 64-byte frames to wal, one every pause, for half a
// second longer than settleMax: the events of a busy writer. during, if
// not nil, runs after the i-th write.
func writeBurst(t *testing.T, wal *os.File, pause time.Duration, during func(i int)) {
	t.Helper()
	frame := make([]byte, 64)
	for i, end := 0, time.Now().Add(settleMax+500*time.Millisecond); time.Now().Before(end); i++ {
		if _, err := wal.WriteAt(frame, int64(i%64)*64); err != nil {
			t.Fatal(err)
		}
		if during != nil {
			during(i)
		}
		time.Sleep(pause)
	}
}

// notifiedFile skips the test where Work has no file notifications, and
// returns the path of an empty database file in the test's directory.
func notifiedFile(t *testing.T) string {
	t.Helper()
	if !fileNotifications {
		t.Skip("no file notifications on " + runtime.GOOS)
	}
	path := filepath.Join(t.TempDir(), "q.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNotifiers_Hold takes a notifier off the file as the writer does
// for its own transactions: while held it watches nothing, and frames
// written to the -wal cause no event, and so no ask; released, it watches again, notes the
// release (so that the loop looks every store.PollInterval for afterRelease, see
// notifiers) and is told of the next write. Its watch is a function of
// both holds: a dormant spell that ends while the writer holds leaves it
// off until the release, and a release during a dormant spell, or while
// the loop has no room, leaves it off until the loop is idle.
func TestNotifiers_Hold(t *testing.T) {
	t.Parallel()
	path := notifiedFile(t)
	var version, asked atomic.Int64
	var room atomic.Bool
	room.Store(true)
	woken := make(chan int64, 100)
	wk := store.NewWaker(func() { woken <- version.Load() }, room.Load)
	// The -wal exists before the watch: its creation would start a burst
	// of asks, which go on while held.
	wal, err := os.OpenFile(path+"-wal", os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer wal.Close()
	n, err := notify(path, func() (int64, error) { asked.Add(1); return version.Load(), nil }, wk, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.close()
	var s notifiers
	s.add(n)
	write := func() {
		t.Helper()
		for i := range 20 {
			if _, err := wal.WriteAt(make([]byte, 64), int64(i)*64); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
	}

	s.hold()
	waitWatching(t, n, 0)
	asked.Store(0)
	version.Store(1) // the writer's own commit
	write()
	time.Sleep(10 * settleFirst)
	if got := asked.Load(); got != 0 {
		t.Fatalf("data_version asked %d times for writes while held, want 0", got)
	}
	released := time.Now()
	s.release()
	waitWatching(t, n, 1)
	if noted := time.Unix(0, n.released.Load()); noted.Before(released) {
		t.Errorf("the release noted came %v before the release, want after it", released.Sub(noted))
	}
	version.Store(2) // another connection's commit, once released
	write()
	awaitVersion(t, woken, 2)

	// Dormant, then held: the loop's idle ends the spell, not the hold.
	room.Store(false)
	write() // a burst, whose ask finds no room
	waitWatching(t, n, 0)
	s.hold()
	version.Store(3) // committed during the spell
	room.Store(true)
	wk.Idled()
	awaitVersion(t, woken, 3) // the ask after the spell
	if got := watches(t, n); got != 0 {
		t.Fatalf("the notifier watches %d paths once idle while held, want 0", got)
	}
	s.release()
	waitWatching(t, n, 1)

	// Released while the loop has no room: dormant until it is idle, with
	// no event to find that out by.
	room.Store(false)
	s.hold()
	s.release()
	if got := watches(t, n); got != 0 {
		t.Fatalf("the notifier watches %d paths once released with no room, want 0", got)
	}
	version.Store(4) // committed during the spell
	room.Store(true)
	wk.Idled()
	awaitVersion(t, woken, 4)
	waitWatching(t, n, 1)
}

// awaitVersion waits for a wake-up at which version said want.
func awaitVersion(t *testing.T, woken <-chan int64, want int64) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case v := <-woken:
			if v == want {
				return
			}
		case <-deadline:
			t.Fatalf("no wake-up for version %d in 10s", want)
		}
	}
}
