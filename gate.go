package litequeue

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
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

// The scopes of litequeue_paused.
const (
	scopeQueue = "queue"
	scopeKind  = "kind"
)

// A gate is a Queue's flow control: it reads, for a claim or an idle
// worker's due times, what may be taken now (admit), and keeps, in the
// transactions that claim and that store a run's end, what the limits and
// breakers count (claimed, ran). Its rules are here and in pause.go,
// limits.go and breaker.go; it holds no state of its own between calls.
type gate struct {
	st     *storage
	reg    *registry
	clock  clock.Clock
	logger *slog.Logger
	events *emitter
	wake   *signal // the Queue's idle Work loops
}

// An admission says which of the handled kinds a claim may take now, from
// which queues, and how many of each.
type admission struct {
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

// admit reads, in tx at now, what the claims of the given kinds may take.
// claiming says that a claim follows in tx, which then locks each kind it
// caps (see lockKinds). paused says whether anything is paused, as the
// caller read it with a read it makes anyway (store.BeforeClaim,
// store.ReadLeaseTimes): if not, the gate reads no pauses, unless it
// waited for locks, during which a pause may have committed.
func (g *gate) admit(ctx context.Context, tx store.Execer, kinds []string, now time.Time, claiming, paused bool) (*admission, error) {
	a := &admission{kinds: kinds, anyPaused: paused}
	if claiming && !g.st.eng.Serial() {
		locked, err := g.lockKinds(ctx, tx, a, now)
		if err != nil {
			return nil, err
		}
		// A pause may have committed while the claim waited for a lock;
		// without a wait, the claim began before it (see PauseQueue).
		a.anyPaused = a.anyPaused || locked > 0
	}
	for _, part := range [...]func(context.Context, store.Execer, *admission, time.Time, bool) error{
		g.pauseGate, g.limitGate, g.breakerGate,
	} {
		if len(a.kinds) == 0 {
			break
		}
		if err := part(ctx, tx, a, now, claiming); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// lockKinds locks, before the parts of the gate read, every kind whose
// runs the claim counts (see store.Engine.LockKey): the kinds with a limit, and
// those whose breaker, read just before, may let a probe through. It
// takes them in one pass, in the order of their names, so that two claims
// never wait for each other, and returns how many it locked. The file's
// writers take turns: there the gate locks nothing, and reads nothing more
// for it.
func (g *gate) lockKinds(ctx context.Context, tx store.Execer, a *admission, now time.Time) (int, error) {
	var limited []string
	for _, kind := range a.kinds {
		if h := g.reg.get(kind); h != nil && h.limits.limited() {
			limited = append(limited, kind)
		}
	}
	probes, err := g.breakerProbes(ctx, tx, a, now)
	if err != nil {
		return 0, err
	}
	kinds := lockOrder(limited, probes)
	for _, kind := range kinds {
		if err := g.st.eng.LockKey(ctx, tx, "kind", kind); err != nil {
			return 0, fmt.Errorf("lock kind %q: %w", kind, err)
		}
	}
	a.locked = true
	return len(kinds), nil
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
func (a *admission) shut(kind string, opens time.Time) {
	i := slices.Index(a.kinds, kind)
	if i < 0 {
		return
	}
	a.kinds = slices.Delete(slices.Clone(a.kinds), i, i+1)
	delete(a.caps, kind)
	if !opens.IsZero() && (a.opens.IsZero() || opens.Before(a.opens)) {
		a.opens = opens
	}
}

// limit caps the runs of kind that may start now at n, or lower if already
// capped lower; n ≤ 0 shuts it, to open at opens.
func (a *admission) limit(kind string, n int, opens time.Time) {
	if n <= 0 {
		a.shut(kind, opens)
		return
	}
	if !slices.Contains(a.kinds, kind) {
		return
	}
	if c, ok := a.caps[kind]; ok && c <= n {
		return
	}
	if a.caps == nil {
		a.caps = make(map[string]int)
	}
	a.caps[kind] = n
}

// take reports whether the gate lets one more run of kind start, and
// counts it.
func (a *admission) take(kind string) bool {
	n, ok := a.caps[kind]
	if !ok {
		return true
	}
	if n <= 0 {
		return false
	}
	a.caps[kind] = n - 1
	return true
}

// spent takes out of the gate the kinds whose cap is used up, and reports
// whether there were any.
func (a *admission) spent() bool {
	var out []string
	for kind, n := range a.caps {
		if n <= 0 {
			out = append(out, kind)
		}
	}
	for _, kind := range out {
		a.shut(kind, time.Time{})
	}
	return len(out) > 0
}

// claimed tells the parts of the gate, in the claim's transaction, of the
// runs it let start: a rate limit counts them, a half-open breaker marks
// its probe.
func (g *gate) claimed(ctx context.Context, tx store.Execer, a *admission, leases []*lease, now time.Time) error {
	if len(leases) == 0 {
		return nil
	}
	if err := g.limitClaimed(ctx, tx, leases, now); err != nil {
		return err
	}
	return g.breakerClaimed(ctx, tx, a, leases, now)
}

// ran tells the parts of the gate, in the transaction that stored it, of
// the decision d on a run's end (its history row says how the run ended):
// a limit's idle workers on a server wake, a breaker counts a failure, or
// closes after its probe succeeded. It returns the events to fire after
// the commit.
func (g *gate) ran(ctx context.Context, tx store.Execer, d *decision, now time.Time) ([]Event, error) {
	if d.history == nil {
		return nil, nil
	}
	if err := g.limitRan(ctx, tx, d); err != nil {
		return nil, err
	}
	return g.breakerRan(ctx, tx, d, now)
}

// opened wakes this Queue's idle Work loops after a write that opened
// a kind or queue by hand (a resume, a breaker's reset), which their docs
// promise to do at once. Where the engine's watch does not tell them of
// their own process's commits (the file) the writer did, at the commit
// (see store.Writer.WakeIdle); on a server the notification comes back to
// them through this process's listener, which may be down.
func (g *gate) opened() {
	if g.st.eng.TellsOwn() {
		g.wake.fire()
	}
}

// setPaused pauses (paused) or resumes the queue or kind name of scope,
// as op ("pause" or "resume") says.
func (g *gate) setPaused(ctx context.Context, op, scope, name string, paused bool) error {
	var changed bool
	err := g.st.write(ctx, func(tx store.Execer) (err error) {
		if paused {
			changed, err = store.Pause(ctx, tx, scope, name, store.MS(g.clock.Now()))
			return err
		}
		if changed, err = store.Resume(ctx, tx, scope, name); err != nil || !changed {
			return err
		}
		return g.st.w.WakeIdle(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("litequeue: %s %s %q: %w", op, scope, name, err)
	}
	if changed {
		g.logger.Info("litequeue: "+op+"d", scope, name)
		if !paused {
			g.opened()
		}
	}
	return nil
}

// pausedRows reads litequeue_paused in tx; nothing from a file of an older
// schema opened read-only, which has no such table (see store.Info.Flow).
func (g *gate) pausedRows(ctx context.Context, tx store.Execer) ([]store.PauseRow, error) {
	if !g.st.info.Flow {
		return nil, nil
	}
	return store.Pauses(ctx, tx)
}

// pauseGate shuts the paused kinds and puts the paused queues in g.paused.
func (g *gate) pauseGate(ctx context.Context, tx store.Execer, a *admission, now time.Time, claiming bool) error {
	if !a.anyPaused {
		return nil
	}
	rows, err := g.pausedRows(ctx, tx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		switch r.Scope {
		case scopeQueue:
			a.paused = append(a.paused, r.Name)
		case scopeKind:
			a.shut(r.Name, time.Time{}) // until a resume, which writes
		}
	}
	return nil
}
