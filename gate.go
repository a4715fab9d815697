package litequeue

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Flow control: what a claim may take now. Pause (pause.go), per-kind
// limits (limits.go) and circuit breakers (breaker.go) each shut kinds or
// queues, or cap how many more runs of a kind may start. The gate is read
// in the claim's write transaction, so that every claimer on the database
// sees the same state and no two let through more than a limit allows
// (PostgreSQL's claimers, which do not take turns, first lock each kind
// they count, in one order: see lockKinds); and read only by an idle
// worker's due times, so that it neither wakes for work it may not take
// nor misses the moment a shut kind opens.

// A gate says which of the handled kinds a claim may take now, from which
// queues, and how many of each.
type gate struct {
	kinds  []string       // the kinds a claim may take
	paused []string       // queues nothing is claimed from
	caps   map[string]int // kind: at most this many more runs may start now; absent: no cap
	opens  time.Time      // the earliest moment a shut kind opens again by itself; zero: none
	probes []string       // kinds whose half-open breaker takes its probe in this claim (breaker.go)

	anyPaused bool // litequeue_paused has a row: pauseGate reads them

	// locked says that the claim locked, before the parts read, the kinds
	// it counts (see lockKinds), having read breakers first.
	locked   bool
	breakers []breakerRow
}

// gate reads, in tx at now, what the claims of the given kinds may take.
// claiming says that a claim follows in tx, which then locks each kind it
// caps (see lockKinds). paused says whether anything is paused, as the
// caller read it (anyPausedSQL) with a read it makes anyway: if not, the
// gate reads no pauses, unless it waited for locks, during which a pause
// may have committed.
func (q *Queue) gate(ctx context.Context, tx execer, kinds []string, now time.Time, claiming, paused bool) (*gate, error) {
	g := &gate{kinds: kinds, anyPaused: paused}
	if claiming && q.onServer() {
		if err := q.lockKinds(ctx, tx, g, now); err != nil {
			return nil, err
		}
		g.anyPaused = true
	}
	for _, part := range [...]func(context.Context, execer, *gate, time.Time, bool) error{
		q.pauseGate, q.limitGate, q.breakerGate,
	} {
		if len(g.kinds) == 0 {
			break
		}
		if err := part(ctx, tx, g, now, claiming); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// flowTables reports whether the database has the tables of schema
// version 5 — flow control's and the periodic schedules' — which pauses,
// limits, breakers and Periodics read: only a file of an older version
// that OpenReadOnly opened, without migrating it, has not (see
// fileJobColumns).
func (q *Queue) flowTables() bool { return q.flow }

// anyPausedSQL, a column of a read that the gate's caller makes anyway,
// tells whether anything is paused (see gate and pauseGate).
const anyPausedSQL = `EXISTS (SELECT 1 FROM litequeue_paused)`

// lockKinds locks, before the parts of the gate read, every kind whose
// runs the claim counts (see engine.lockKind): the kinds with a limit, and
// those whose breaker, read just before, may let a probe through. It
// takes them in one pass, in the order of their names, so that two claims
// never wait for each other. The file's writers take turns: there the
// gate locks nothing, and reads nothing more for it.
func (q *Queue) lockKinds(ctx context.Context, tx execer, g *gate, now time.Time) error {
	var limited []string
	for _, kind := range g.kinds {
		if h := q.handler(kind); h != nil && h.limits.limited() {
			limited = append(limited, kind)
		}
	}
	probes, err := q.breakerProbes(ctx, tx, g, now)
	if err != nil {
		return err
	}
	for _, kind := range lockOrder(limited, probes) {
		if err := q.eng.lockKind(ctx, tx, kind); err != nil {
			return fmt.Errorf("lock kind %q: %w", kind, err)
		}
	}
	g.locked = true
	return nil
}

// lockOrder returns the kinds of every set, each once, in the one order
// in which transactions lock kinds.
func lockOrder(sets ...[]string) []string {
	kinds := slices.Concat(sets...)
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// shut takes kind out of the gate; it opens again by itself at opens
// (zero: only when something is written, such as a run's end or a resume).
func (g *gate) shut(kind string, opens time.Time) {
	i := slices.Index(g.kinds, kind)
	if i < 0 {
		return
	}
	g.kinds = slices.Delete(slices.Clone(g.kinds), i, i+1)
	delete(g.caps, kind)
	if !opens.IsZero() && (g.opens.IsZero() || opens.Before(g.opens)) {
		g.opens = opens
	}
}

// limit caps the runs of kind that may start now at n, or lower if already
// capped lower; n ≤ 0 shuts it, to open at opens.
func (g *gate) limit(kind string, n int, opens time.Time) {
	if n <= 0 {
		g.shut(kind, opens)
		return
	}
	if !slices.Contains(g.kinds, kind) {
		return
	}
	if c, ok := g.caps[kind]; ok && c <= n {
		return
	}
	if g.caps == nil {
		g.caps = make(map[string]int)
	}
	g.caps[kind] = n
}

// take reports whether the gate lets one more run of kind start, and
// counts it.
func (g *gate) take(kind string) bool {
	n, ok := g.caps[kind]
	if !ok {
		return true
	}
	if n <= 0 {
		return false
	}
	g.caps[kind] = n - 1
	return true
}

// spent takes out of the gate the kinds whose cap is used up, and reports
// whether there were any.
func (g *gate) spent() bool {
	var out []string
	for kind, n := range g.caps {
		if n <= 0 {
			out = append(out, kind)
		}
	}
	for _, kind := range out {
		g.shut(kind, time.Time{})
	}
	return len(out) > 0
}

// gated tells the parts of the gate, in the claim's transaction, of the
// runs it let start: a rate limit counts them, a half-open breaker marks
// its probe.
func (q *Queue) gated(ctx context.Context, tx execer, g *gate, leases []*lease, now time.Time) error {
	if len(leases) == 0 {
		return nil
	}
	if err := q.limitClaimed(ctx, tx, leases, now); err != nil {
		return err
	}
	return q.breakerClaimed(ctx, tx, g, leases, now)
}

// ran tells the parts of the gate, in the transaction that stored it, of
// the decision d on a run's end (its history row says how the run ended):
// a limit's idle workers on a server wake, a breaker counts a failure, or
// closes after its probe succeeded. It returns the events to fire after
// the commit.
func (q *Queue) ran(ctx context.Context, tx execer, d *decision, now time.Time) ([]Event, error) {
	if d.history == nil {
		return nil, nil
	}
	if err := q.limitRan(ctx, tx, d); err != nil {
		return nil, err
	}
	return q.breakerRan(ctx, tx, d, now)
}

// pgWakeSQL wakes every listening worker at the commit, on the channel of
// the Queue's schema (pgChannel), as the trigger does for a job that
// becomes pending (schema_postgres.sql).
const pgWakeSQL = `SELECT pg_notify(?, '')`

// wakeIdle wakes, at the commit of tx, a write of the Queue's writer,
// the idle Work loops of every process on the database, for a write that
// opened a shut kind or queue or moved when one opens: a resume, a run's
// end under MaxRunning, a breaker's probe ending or a reset. On
// PostgreSQL it notifies them, this process's among them, since they look
// again only when told (the trigger tells only of a job that becomes
// pending). On the file the commit is what other processes watch for, and
// this Queue's loops wake after it (see wakeOwn).
func (q *Queue) wakeIdle(ctx context.Context, tx execer) error {
	if !q.onServer() {
		q.wakeOwn()
		return nil
	}
	_, err := tx.ExecContext(ctx, pgWakeSQL, q.eng.(*pgEngine).wakeOn)
	return err
}

// wakeOpened wakes this Queue's idle Work loops after a write that opened
// a kind or queue by hand (a resume, a breaker's reset), which their docs
// promise to do at once. On the file wakeIdle did, at the commit; on a
// server its notification comes back to them through this process's
// listener, which may be down.
func (q *Queue) wakeOpened() {
	if q.onServer() {
		q.notify()
	}
}

// wakeOwn wakes this Queue's idle Work loops at the commit of the write of
// its writer that runs, on the file, whose notifiers do not watch the
// Queue's own commits (see notifiers), and where a loop that polls (no
// notifications run) would otherwise wait for its poll: for wakeIdle,
// and for a run's end that made its job pending again, which another
// Work's loop may take (a run released at a shutdown, a retry). On
// PostgreSQL a notification wakes them: the trigger's, of a job that
// becomes pending, or wakeIdle's.
func (q *Queue) wakeOwn() {
	if !q.onServer() {
		q.w.wakeAtCommit()
	}
}
