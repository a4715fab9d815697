package litequeue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Periodic jobs: schedules registered with Queue.Periodic fire one job
// per slot, however many processes register them, with no leader: firing
// a slot is one write, the conditional update of the schedule's row in
// litequeue_periodic and the job's insert, and only the first process to
// make it changes anything. See "Periodic jobs" in doc.go.

// Missed says what a schedule does with a slot that passed while no
// process of the file was there to fire it.
type Missed string

// The values of [Missed].
const (
	// CatchUpOne fires one job, at once, for the latest slot missed,
	// however many were missed: never a burst. The default.
	CatchUpOne Missed = "one"
	// SkipMissed records the latest missed slot as skipped and fires
	// nothing for it; the next slot fires as usual.
	SkipMissed Missed = "skip"
)

// PeriodicGrace is how late a slot may be evaluated and still count as on
// time: from PeriodicGrace on, the slot was missed, and the schedule's
// [Missed] decides. As only the latest slot is considered, a schedule whose
// slots come at most PeriodicGrace apart (every minute, "@every 30s")
// never misses one.
const PeriodicGrace = time.Minute

// PeriodicOption sets one property of a schedule registered with
// [Queue.Periodic].
type PeriodicOption func(*periodicConfig)

type periodicConfig struct {
	loc     *time.Location
	missed  Missed
	enqueue []EnqueueOption
}

// PeriodicIn reads the schedule's spec in the location loc. Default:
// UTC, the same for every process whatever its machine's zone. A nil loc
// is refused.
func PeriodicIn(loc *time.Location) PeriodicOption {
	return func(c *periodicConfig) { c.loc = loc }
}

// OnMissed sets what the schedule does with a missed slot. Default:
// [CatchUpOne].
func OnMissed(m Missed) PeriodicOption {
	return func(c *periodicConfig) { c.missed = m }
}

// PeriodicJob sets the enqueue options of the schedule's jobs: [OnQueue],
// [Priority], [MaxTries], [Metadata]. [UniqueKey], [Delay] and [At] are
// refused: a job is due at its slot, and a slot fires once.
func PeriodicJob(opts ...EnqueueOption) PeriodicOption {
	return func(c *periodicConfig) { c.enqueue = append(c.enqueue, opts...) }
}

// The metadata keys that every periodic job carries.
const (
	PeriodicNameKey = "litequeue.periodic" // the schedule's name
	PeriodicSlotKey = "litequeue.slot"     // the slot, in RFC 3339 in the schedule's location
)

// periodic is one schedule registered on this Queue.
type periodic struct {
	name, spec, kind string
	slots            *cronSpec
	payload          any
	missed           Missed
	queue            string
	enqueue          []EnqueueOption

	done int64 // ms: the latest slot known fired or skipped, by anyone; under periodics.mu
}

// periodics are the schedules of a Queue. The zero value has none.
type periodics struct {
	mu     sync.Mutex
	byName map[string]*periodic
}

// list returns the schedules, in name order.
func (ps *periodics) list() []*periodic {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]*periodic, 0, len(ps.byName))
	for _, name := range slices.Sorted(maps.Keys(ps.byName)) {
		out = append(out, ps.byName[name])
	}
	return out
}

// Periodic registers the schedule name: a job of kind with payload at
// each slot of spec, exactly one per slot however many Queues — in one
// process or many — register the same name on the file, with no leader.
// spec is a standard 5-field cron spec ("*/15 * * * *", "0 9 * * MON-FRI";
// a day of the week of 7 is Sunday, as in cron(8)), a descriptor (@hourly, @daily or @midnight, @weekly, @monthly, @yearly)
// or "@every D" with D of at least [MinPeriodicEvery], whose slots are the
// multiples of D since the Unix epoch. The spec is read in UTC unless
// [PeriodicIn] says otherwise; on the days the clock changes, it follows
// cron(8)'s rules (see doc.go).
//
// The jobs fire from [Queue.RunDue] (before it claims, so that its jobs run
// in the same call) and [Queue.Work] (a timer on the injected clock for the
// next slot); [Queue.NextDue] includes the next slot. Each job is due at
// its slot ([Job.RunAt]) and carries its schedule and slot in its metadata
// ([PeriodicNameKey], [PeriodicSlotKey]). Only the latest slot that has
// come is ever considered: a slot first evaluated [PeriodicGrace] late or
// more was missed, and [OnMissed] decides whether one job fires for it. A
// new schedule starts at its latest slot at or before its first
// registration, which does not fire.
//
// Periodic writes the schedule's definition to the file, for the
// litequeue command and the other processes: the newest registration's
// definition is stored. A [Queue] whose own spec, location or kind for the
// name is no longer the stored one fires nothing for it (in a rolling
// deploy, the new version's schedule takes over). It refuses, registering
// nothing: a name, kind or queue that is not a name (see [NameLimit]), a
// name this Queue registered already, a spec
// that does not parse (with the parser's complaint) or never fires, a nil
// location, an "@every" below a second, an unknown [Missed], and the
// enqueue options and payload that [Queue.Enqueue] would refuse, or that
// [PeriodicJob] refuses.
func (q *Queue) Periodic(ctx context.Context, name, spec, kind string, payload any, opts ...PeriodicOption) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	p, err := q.newPeriodic(name, spec, kind, payload, opts)
	if err != nil {
		return fmt.Errorf("litequeue: periodic %q: %w", name, err)
	}
	ps := &q.periodic
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if _, ok := ps.byName[name]; ok {
		return fmt.Errorf("litequeue: periodic %q: registered already on this Queue", name)
	}
	now := q.now()
	first := p.slots.prev(now)
	if first.IsZero() {
		first = now
	}
	err = q.write(ctx, func(tx execer) error {
		return tx.GetContext(ctx, &p.done, registerPeriodicSQL, p.name, p.spec, p.kind, p.queue,
			p.slots.loc.String(), string(p.missed), ms(first), ms(now))
	})
	if err != nil {
		return fmt.Errorf("litequeue: periodic %q: %w", name, err)
	}
	if ps.byName == nil {
		ps.byName = make(map[string]*periodic)
	}
	ps.byName[name] = p
	q.notify() // a Work loop asleep sets its timer for the new schedule
	return nil
}

// registerPeriodicSQL stores a schedule's definition. A new schedule
// starts at its latest slot; a changed spec or location moves the last
// slot up to the new schedule's latest, so that registering fires no past
// slot, and an unchanged one keeps it, so that a slot missed while every
// process was down is caught up. It returns the last slot stored.
const registerPeriodicSQL = `INSERT INTO litequeue_periodic
	(name, spec, kind, queue, location, missed, last_slot, registered_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (name) DO UPDATE SET
		last_slot = CASE WHEN (litequeue_periodic.spec <> excluded.spec OR litequeue_periodic.location <> excluded.location)
			AND excluded.last_slot > litequeue_periodic.last_slot
			THEN excluded.last_slot ELSE litequeue_periodic.last_slot END,
		spec = excluded.spec, kind = excluded.kind, queue = excluded.queue, location = excluded.location,
		missed = excluded.missed, registered_at = excluded.registered_at
	RETURNING last_slot`

// newPeriodic checks a registration's arguments.
func (q *Queue) newPeriodic(name, spec, kind string, payload any, opts []PeriodicOption) (*periodic, error) {
	cfg := periodicConfig{loc: time.UTC, missed: CatchUpOne}
	for _, o := range opts {
		o(&cfg)
	}
	if name == "" {
		return nil, errors.New("empty name")
	}
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	switch cfg.missed {
	case CatchUpOne, SkipMissed:
	default:
		return nil, fmt.Errorf("unknown Missed %q (want %q or %q)", cfg.missed, CatchUpOne, SkipMissed)
	}
	slots, err := parseSpec(spec, cfg.loc)
	if err != nil {
		return nil, err
	}
	if slots.next(q.now()).IsZero() {
		return nil, fmt.Errorf("spec %q never fires", spec)
	}
	var ec enqueueConfig
	for _, o := range cfg.enqueue {
		o(&ec)
	}
	switch {
	case ec.uniqueKey != "":
		return nil, fmt.Errorf("UniqueKey %q: a periodic job fires once per slot already", ec.uniqueKey)
	case ec.atSet || ec.delay != 0:
		return nil, errors.New("Delay or At: a periodic job is due at its slot")
	}
	p := &periodic{name: name, spec: spec, kind: kind, slots: slots, payload: payload,
		missed: cfg.missed, enqueue: cfg.enqueue}
	b, err := q.newBatch(kind, []any{payload}, p.jobOptions(slots.next(q.now()))) // as a slot's job will be
	if err != nil {
		return nil, err
	}
	p.queue = b.cfg.queue
	return p, nil
}

// jobOptions are the enqueue options of the job for slot.
func (p *periodic) jobOptions(slot time.Time) []EnqueueOption {
	return append(slices.Clip(p.enqueue), At(slot),
		Metadata(PeriodicNameKey, p.name), Metadata(PeriodicSlotKey, slot.Format(time.RFC3339)))
}

// firePeriodic fires, or records as skipped, the latest slot of each of
// the Queue's schedules that no one has yet, and returns the earliest next
// slot (zero: no schedule). The caller has entered or runs inside Work.
func (q *Queue) firePeriodic(ctx context.Context) (time.Time, error) {
	var next time.Time
	for _, p := range q.periodic.list() {
		if err := q.fireSlot(ctx, p); err != nil {
			return time.Time{}, fmt.Errorf("litequeue: periodic %q: %w", p.name, err)
		}
		if n := q.nextSlot(p); next.IsZero() || n.Before(next) {
			next = n
		}
	}
	return next, nil
}

// nextSlot returns when p next has a slot to fire: its latest slot if no
// one has fired it yet (due now), else its next.
func (q *Queue) nextSlot(p *periodic) time.Time {
	now := q.now()
	s := p.slots.prev(now)
	q.periodic.mu.Lock()
	done := p.done
	q.periodic.mu.Unlock()
	if !s.IsZero() && ms(s) > done {
		return s
	}
	return p.slots.next(now)
}

const (
	// claimSlotSQL moves a schedule's last slot up to the slot, if no one
	// did: whoever comes second changes nothing (on a server, the UPDATE
	// reads the row again once it holds its lock).
	claimSlotSQL = `UPDATE litequeue_periodic SET last_slot = ?, last_skipped = ?
		WHERE name = ? AND last_slot < ? AND spec = ? AND location = ? AND kind = ?`
	firedSlotSQL = `UPDATE litequeue_periodic SET last_job_id = ?, fired_at = ? WHERE name = ?`
)

// fireSlot fires p's latest slot, or records it as skipped, unless this
// Queue knows it is done.
func (q *Queue) fireSlot(ctx context.Context, p *periodic) error {
	now := q.now()
	slot := p.slots.prev(now)
	ps := &q.periodic
	ps.mu.Lock()
	done := p.done
	ps.mu.Unlock()
	if slot.IsZero() || ms(slot) <= done {
		return nil
	}
	skip := p.missed == SkipMissed && now.Sub(slot) >= PeriodicGrace
	batch, err := q.newBatch(p.kind, []any{p.payload}, p.jobOptions(slot))
	if err != nil {
		return err
	}
	var job *Job
	err = q.write(ctx, func(tx execer) error {
		job = nil
		res, err := tx.ExecContext(ctx, claimSlotSQL, ms(slot), boolInt(skip), p.name, ms(slot),
			p.spec, p.slots.loc.String(), p.kind)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 || skip {
			return err // someone else fired it, or it is skipped
		}
		jobs, err := batch.insert(ctx, tx, now)
		if err != nil {
			return err
		}
		job = jobs[0]
		_, err = tx.ExecContext(ctx, firedSlotSQL, job.ID, ms(now), p.name)
		return err
	})
	if err != nil {
		return err
	}
	ps.mu.Lock()
	p.done = max(p.done, ms(slot))
	ps.mu.Unlock()
	if job != nil {
		q.notify()
		q.emitEnqueued(now, job)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PeriodicInfo is a schedule as the file stores it, for [Queue.Periodics].
type PeriodicInfo struct {
	Name, Spec, Kind, Queue string
	Location                string // the time zone the spec is read in
	Missed                  Missed
	LastSlot                time.Time // the latest slot fired or skipped; at first, the latest slot before the registration
	LastSkipped             bool      // [PeriodicInfo.LastSlot] was missed and skipped
	LastJobID               int64     // the job of the latest slot fired; 0: none yet
	LastFired               time.Time // when that job was enqueued; zero: never
	NextSlot                time.Time // the slot the schedule fires next; in the past if it is due now; zero if unknown here
	RegisteredAt            time.Time // the newest registration
}

const periodicsSQL = `SELECT name, spec, kind, queue, location, missed, last_slot, last_skipped,
	last_job_id, fired_at, registered_at FROM litequeue_periodic ORDER BY name`

type periodicRow struct {
	Name         string `db:"name"`
	Spec         string `db:"spec"`
	Kind         string `db:"kind"`
	Queue        string `db:"queue"`
	Location     string `db:"location"`
	Missed       string `db:"missed"`
	LastSlot     int64  `db:"last_slot"`
	LastSkipped  int64  `db:"last_skipped"`
	LastJobID    int64  `db:"last_job_id"`
	FiredAt      int64  `db:"fired_at"`
	RegisteredAt int64  `db:"registered_at"`
}

// Periodics returns every schedule stored in the file, registered by any
// process, in name order. It works on a [Queue] from [OpenReadOnly]: a file
// of a schema older than periodic jobs has none. [PeriodicInfo.NextSlot] is
// computed on this Queue's clock, and is zero for a location this machine
// does not know.
func (q *Queue) Periodics(ctx context.Context) ([]PeriodicInfo, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if !q.flowTables() {
		return nil, nil
	}
	var rows []periodicRow
	if err := q.db.SelectContext(ctx, &rows, periodicsSQL); err != nil {
		return nil, fmt.Errorf("litequeue: periodics: %w", err)
	}
	now := q.now()
	out := make([]PeriodicInfo, len(rows))
	for i, r := range rows {
		out[i] = PeriodicInfo{
			Name: r.Name, Spec: r.Spec, Kind: r.Kind, Queue: r.Queue, Location: r.Location,
			Missed: Missed(r.Missed), LastSlot: fromMS(r.LastSlot), LastSkipped: r.LastSkipped != 0,
			LastJobID: r.LastJobID, LastFired: fromMSOrZero(r.FiredAt), RegisteredAt: fromMS(r.RegisteredAt),
		}
		if loc, err := time.LoadLocation(r.Location); err == nil {
			if slots, err := parseSpec(r.Spec, loc); err == nil {
				s := slots.prev(now)
				if s.IsZero() || ms(s) <= r.LastSlot {
					s = slots.next(now)
				}
				out[i].NextSlot = s
			}
		}
	}
	return out, nil
}

// fromMSOrZero is fromMS, with 0 the zero time.
func fromMSOrZero(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return fromMS(v)
}

// nextPeriodic is the earliest slot of the Queue's schedules still to
// fire (see nextSlot), for NextDue; NULL with no schedule.
func (q *Queue) nextPeriodic() sql.NullInt64 {
	var next sql.NullInt64
	for _, p := range q.periodic.list() {
		if s := q.nextSlot(p); !s.IsZero() {
			next = minNull(next, sql.NullInt64{Int64: ms(s), Valid: true})
		}
	}
	return next
}
