package sqlite

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Wake-ups for writes by other processes. An idle Work learns of another
// process's commit (or of the app's EnqueueTx, which commits outside the
// Queue) from the file system: a notifier watches the directory of the
// database — a watch of the file itself is lost when the file is replaced
// — for changes to the database file and its -wal, and wakes the Work
// loops when a commit of those changes can be read, not once per event.
// The file system tells of a commit's frames as they are written to the
// -wal, before the fsync and the update of the -shm that make them
// visible (through shared memory, of which it does not tell): so after a
// burst the notifier asks PRAGMA data_version, again and again at growing
// intervals for settleMax, and wakes the loops each time it says that
// someone committed. Each loop asks data_version again (see watch in
// engine.go) before it looks for jobs. The Queue's own commits it does
// not watch (see notifiers): those that give a loop something to do wake
// it in-process (notify, wakeOwn).
//
// Notifications can fail to come: the notifier could not start (no
// inotify instance or watch left), it stopped on an error, or the writer
// is where the file system does not tell (another machine's kernel on a
// network file system). So the loop also looks on its own: every
// store.PollInterval without a notifier, and with one every store.PollInterval for
// recentChange after the file last changed — a commit becomes readable
// only after its fsync, which on a slow card can end after the notifier
// stopped asking (settleMax) — and every notifiedPoll once the file has
// been quiet that long, which bounds the delay of a job whose
// notification was lost. After the Queue's own writer let go of the file
// (see notifiers) the loop looks every store.PollInterval for
// afterRelease only.
const (
	notifiedPoll = time.Minute
	recentChange = 30 * time.Second
	afterRelease = settleMax
)

// Only inotify (Linux) watches a directory without opening its files.
// kqueue (macOS, the BSDs) opens every file of a watched directory and
// closes it again when the watch ends, and on POSIX closing any descriptor
// of a file drops every fcntl lock the process holds on it — SQLite's
// locks on the database and its -shm (see Storage in DESIGN.md). Elsewhere
// Work polls every store.PollInterval: see fileNotifications.

// After a burst of changes the notifier asks data_version settleFirst
// after its events, and then at intervals that double, of at most
// settleGap for settleFast after the last event, until settleMax after it
// (see settle).
const (
	settleFirst = 500 * time.Microsecond
	settleGap   = 2 * time.Millisecond
	settleFast  = 50 * time.Millisecond
	settleMax   = 2 * time.Second
)

// inBubble reports whether the time package's clock reads before 2001:
// in a testing/synctest bubble, whose fake clock starts at 2000-01-01
// UTC. A notifier waits on the file system's I/O, which a bubble cannot
// wait on (its clock would stop for good), so Work polls there as it does
// without one; so it does on a machine whose clock was never set.
func inBubble() bool { return time.Now().Unix() < bubbleEnd }

const bubbleEnd = 978307200 // 2001-01-01 00:00:00 UTC

// notifier wakes the Work loops when the database file or its -wal
// changes (see above). It runs one goroutine, which close ends.
//
// It watches the directory only while neither of two holds is on:
//
//	sleeping  on: dormant begins (settle found the loop with no room, or
//	              release did and dozed it)
//	          off: the loop is idle with room (waker.idled), or the watch
//	              failed
//	held      on: the Queue's writer began a transaction (notifiers.hold)
//	          off: it ended, before the writer lets go of the flock or
//	              begins again (notifiers.release)
//
// and setState alone turns the watch on and off (see dirWatch), as the
// holds change. A watch that cannot be turned on again breaks the
// notifier: its watch is closed, run ends, and Work polls.
type notifier struct {
	w        *dirWatch             // of the database's directory
	names    [2]string             // the base names of the database and its -wal
	version  func() (int64, error) // PRAGMA data_version on a connection of the watch
	last     int64                 // what version said last
	wk       store.Waker
	logger   *slog.Logger
	up       atomic.Bool  // the goroutine still reads events
	changed  atomic.Int64 // when the last event came, in Unix nanoseconds
	released atomic.Int64 // when release last put the watch back, in Unix nanoseconds
	// doze holds a token from release when it left the watch off, the loop
	// having no room, until run or settle waits as dormant does.
	doze chan struct{}
	done chan struct{}

	mu       sync.Mutex
	sleeping bool // settle waits for the loop to have room (see dormant)
	held     bool // the Queue's writer is in a transaction (see notifiers)
	watching bool // w is on: neither sleeping nor held
	broken   bool // the watch could not be turned on again: w is closed
}

// notify starts a notifier of changes to the database at path, which wakes
// the loop once per burst of committed changes, as version (data_version
// on a connection to the file) tells.
func notify(path string, version func() (int64, error), wk store.Waker, logger *slog.Logger) (*notifier, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // the -wal is beside the file the link names
	}
	w, err := watchDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	base := filepath.Base(path)
	n := &notifier{w: w, names: [2]string{base, base + "-wal"}, version: version, wk: wk, logger: logger,
		doze: make(chan struct{}, 1), done: make(chan struct{}), watching: true}
	if n.last, err = version(); err != nil {
		w.close()
		return nil, err
	}
	n.up.Store(true)
	go n.run()
	return n, nil
}

// run reads events until the watch closes or fails, and settles each
// burst.
func (n *notifier) run() {
	defer close(n.done)
	defer n.up.Store(false)
	for {
		select {
		case name, ok := <-n.w.events:
			if !ok {
				return
			}
			if !n.ours(name) {
				continue
			}
		case _, ok := <-n.w.errors:
			if !ok {
				return
			}
			// An overflow of the kernel's queue, or a read that failed:
			// changes may have been missed, so look.
		case <-n.doze:
			if !n.dormant() {
				return
			}
			// Blind while dormant: settle asks, as after an event.
		}
		n.changed.Store(time.Now().UnixNano())
		if !n.settle() {
			return
		}
	}
}

// settle asks data_version after each event, and again at growing
// intervals, until settleMax after the burst's last event, and wakes the
// loops each time it says that someone committed: a commit may become
// visible after a change that an earlier one made, so the first change is
// not the end. The first ask comes settleFirst after an event; the
// intervals double from there, but stay at most settleGap for settleFast
// after an event, when the commit is most likely to land, and asks come
// at most every settleGap while events keep coming (a busy writer). It
// reports false if the watch closed, or could not be turned on again after a
// dormant spell (see dormant).
//
// While it waits settleGap or less, it leaves the events queued, and
// takes them all after the ask (drain): a commit writes its frames to the
// -wal one call at a time, each an event, and the kernel merges the
// repeats of a change that no one has read yet, so a busy writer costs a
// read per ask rather than one per frame. Events found so come at most
// settleGap before the ask that finds them; the next ask comes settleGap
// after it. Over a longer wait it takes each event as it comes, to ask
// soon after it.
func (n *notifier) settle() bool {
	now := time.Now()
	b := burst{event: now, asked: now.Add(-settleGap), wait: settleFirst, next: now.Add(settleFirst)}
	t := time.NewTimer(b.wait)
	defer t.Stop()
	for {
		ask, open := n.await(&b, t)
		if !open {
			return false
		}
		if !ask {
			now = time.Now()
			n.changed.Store(now.UnixNano())
			if d, sooner := b.took(now); sooner {
				t.Reset(d)
			}
			continue
		}
		over, open := n.ask(&b)
		if over || !open {
			return open
		}
		t.Reset(b.wait)
	}
}

// await waits for what comes next in the burst b, whose timer is t: an
// event (ask false), or the time to ask, after a dormant spell if the loop
// has no room (see rest). It reports false if the watch closed, or
// could not be turned on again.
func (n *notifier) await(b *burst, t *time.Timer) (ask, open bool) {
	var events <-chan string // nil: left queued
	if b.wait > settleGap {
		events = n.w.events
	}
	select {
	case _, ok := <-events:
		return false, ok
	case _, ok := <-n.w.errors:
		return false, ok
	case <-t.C:
		if n.wk.Wanted() {
			return true, true
		}
	case <-n.doze:
	}
	return true, n.rest(b)
}

// rest waits out a dormant spell (see dormant). Blind meanwhile, the
// notifier starts the burst afresh, as at an event, for a commit whose
// frames came meanwhile and which becomes visible only later.
func (n *notifier) rest(b *burst) bool {
	if !n.dormant() {
		return false
	}
	now := time.Now()
	b.event, b.wait = now, settleFirst
	n.changed.Store(now.UnixNano())
	return true
}

// dormant waits, while the loop has no room for a job (see waker; and
// after release dozed it, see doze), until it is idle, with no watch: a busy worker is its own busiest writer, and
// each of its commits would cost the kernel an event at every write of a
// frame, a read here and a look in the loop, all for nothing, since a loop
// with no room claims as soon as a run ends, reading what is committed
// then. It watches again before the ask that follows, which compares with
// the version it asked before it slept, and so wakes the loop for any
// commit since, which its last look may have missed; settle then asks on
// for settleMax, as after an event, for a commit not yet visible. An
// idle token left from before the spell (the loop slept with room, then
// filled up) does not end it. An error of the watch ends the wait too,
// to look. It reports false if the watch closed, or could not be turned on
// again (logged: Work then polls, as it does without a notifier).
func (n *notifier) dormant() bool {
	n.setState(func() { n.sleeping = true })
wait:
	for !n.wk.Wanted() {
		select {
		case <-n.wk.IdleC():
		case _, ok := <-n.w.errors:
			if !ok {
				return false
			}
			break wait
		}
	}
	return n.setState(func() { n.sleeping = false })
}

// hold takes the watch off while the Queue's own writer is in a
// transaction (see notifiers).
func (n *notifier) hold() { n.setState(func() { n.held = true }) }

// release puts the watch back when the writer's transaction ended, and
// notes that it did (see notifiers). A loop with no room wants no watch
// (see dormant): release leaves it off then, as dormant, and has the
// notifier's goroutine wait for the loop's idle, which a writer that
// keeps the loop's workers busy would otherwise never let it see, its
// commits bringing no events. A loop whose file was quiet may sleep for
// notifiedPoll: release wakes it, to sleep again for store.PollInterval.
func (n *notifier) release() {
	dozes := false
	n.setState(func() {
		n.held = false
		if !n.sleeping && !n.wk.Wanted() {
			n.sleeping, dozes = true, true
		}
	})
	quiet := n.quiet()
	n.released.Store(time.Now().UnixNano())
	switch {
	case dozes:
		select {
		case n.doze <- struct{}{}:
		default: // told already
		}
	case quiet:
		n.wk.Wake()
	}
}

// notifiers are the running notifiers of an engine's watches, which the
// Queue's writer takes off the file while it writes. Between its BEGIN
// IMMEDIATE and its COMMIT no one else can commit; and each write of a
// frame to the -wal, with a watch on the directory, costs the kernel an
// event, in the write call itself, and the notifier an ask of
// data_version, which begins a read transaction, after it: all for a
// commit of the Queue's own. So begin takes every notifier off the file
// once it holds the write lock (hold), and puts them back (release)
// before it begins again, and when the writer lets go of the flock, before
// another process's writer can take it.
//
// The loops learn of the Queue's own commits in-process instead: each
// write that makes a job claimable wakes them after its commit (an
// Enqueue, a retry, snooze or release, a run's end under MaxRunning, a
// breaker's probe, a resume; see notify, wakeOwn and wakeIdle), and a
// loop whose run ended claims again on its own. A
// commit by a writer that takes no flock (the app's own transaction, a
// shell), whose frames were all written between the writer's COMMIT or
// ROLLBACK and release, comes with no event: release notes the moment
// (see quiet), so that the loop looks every store.PollInterval for
// afterRelease (a loop asleep for notifiedPoll is woken to sleep so),
// which is as long as settle asks after an event. The writer lets go of
// the flock as soon as it has committed (writer.commit), so that span
// lasts microseconds, and a commit made in it whose fsync ends later
// still waits at most notifiedPoll. Not recentChange, as after an event:
// the writer writes when Work starts, at each heartbeat and at each of
// the janitor's rounds, and a look every second for 30 s after each
// would keep an idle process from ever idling.
//
// A watch turned off keeps the events it queued before (see dirWatch): a
// commit made just before BEGIN IMMEDIATE got the lock, by another process
// or another Queue, still wakes the loops.
type notifiers struct {
	mu   sync.Mutex
	all  []*notifier
	held bool
}

func (s *notifiers) add(n *notifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, n)
}

func (s *notifiers) remove(n *notifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.all, n); i >= 0 {
		s.all = slices.Delete(s.all, i, i+1)
	}
}

// hold takes every notifier off the file.
func (s *notifiers) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 0 {
		return
	}
	s.held = true
	for _, n := range s.all {
		n.hold()
	}
}

// release puts them back after a hold; without one it does nothing.
func (s *notifiers) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.held {
		return
	}
	s.held = false
	for _, n := range s.all {
		n.release()
	}
}

// setState changes the notifier's holds with set, and turns the watch on
// or off as they say: on only when neither is on. It reports false if the
// watch could not be turned on again (logged; the watch is closed, so that
// run ends and Work polls, as it does without a notifier).
func (n *notifier) setState(set func()) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	set()
	want := !n.sleeping && !n.held
	if n.broken || want == n.watching {
		return !n.broken
	}
	if !want {
		n.w.watch(false) // an error: the watch is gone already (the directory went)
		n.watching = false
		return true
	}
	if err := n.w.watch(true); err != nil {
		if !errors.Is(err, os.ErrClosed) { // not closed by close, which came first
			n.logger.Warn("litequeue: cannot watch the file again for other processes' writes: Work polls for them", "dir", n.w.dir, "err", err)
			n.w.close()
		}
		n.broken = true
		return false
	}
	n.watching = true
	return true
}

// burst is where settle is in a burst of changes: when its last event
// came, when it last asked, how long its timer waits and when it fires.
type burst struct {
	event, asked, next time.Time
	wait               time.Duration
}

// took notes an event taken at now: the next ask comes soon, but not
// sooner than settleGap after the last ask. It returns how long from now
// that is, if sooner than the timer fires.
func (b *burst) took(now time.Time) (time.Duration, bool) {
	b.event, b.wait = now, settleFirst
	if at := later(now.Add(settleFirst), b.asked.Add(settleGap)); at.Before(b.next) {
		b.next = at
		return at.Sub(now), true
	}
	return 0, false
}

// ask asks data_version, and wakes the loops if someone committed; takes
// the events queued meanwhile (drain); and sets b's next wait: settleGap
// while events come, otherwise doubling, at most settleGap for settleFast
// after the last event. It reports whether the burst is over (settleMax
// after its last event), and whether the watch is still open.
func (n *notifier) ask(b *burst) (over, open bool) {
	v, err := n.version()
	if err != nil || v != n.last {
		n.last = v
		n.wk.Wake()
	}
	b.asked = time.Now()
	came, open := n.drain()
	if !open {
		return false, false
	}
	if came {
		b.event = b.asked
		n.changed.Store(b.asked.UnixNano())
	}
	since := b.asked.Sub(b.event)
	if since >= settleMax {
		return true, true
	}
	if came {
		b.wait = settleGap
	} else if b.wait *= 2; since < settleFast {
		b.wait = min(b.wait, settleGap)
	}
	b.wait = min(b.wait, settleMax-since)
	b.next = b.asked.Add(b.wait)
	return false, true
}

// drain takes the events that are queued, and reports whether one of them
// was a change of ours, and whether the watch is still open.
func (n *notifier) drain() (came, open bool) {
	for {
		select {
		case name, ok := <-n.w.events:
			if !ok {
				return came, false
			}
			came = came || n.ours(name)
		default:
			return came, true
		}
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ours reports whether a change of the file name (a write, or the file
// created, removed or renamed) is one of the database or its -wal, not of
// the -shm, whose writes through shared memory the kernel does not report,
// nor of another file in the directory.
func (n *notifier) ours(name string) bool {
	return name == n.names[0] || name == n.names[1]
}

// running reports whether notifications still come.
func (n *notifier) running() bool { return n != nil && n.up.Load() }

// quiet reports whether the file has not changed for recentChange, nor
// the writer let go of it for afterRelease.
func (n *notifier) quiet() bool {
	return time.Since(time.Unix(0, n.changed.Load())) >= recentChange &&
		time.Since(time.Unix(0, n.released.Load())) >= afterRelease
}

// close stops the notifier and waits for its goroutine to end.
func (n *notifier) close() error {
	if n == nil {
		return nil
	}
	err := n.w.close()
	<-n.done
	return err
}
