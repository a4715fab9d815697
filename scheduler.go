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

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue/internal/store"
)

// Periodic jobs: schedules registered with Queue.Periodic fire one job
// per slot, however many processes register them, with no leader: firing
// a slot is one write, the conditional update of the schedule's row in
// litequeue_periodic and the job's insert, and only the first process to
// make it changes anything (store.ClaimSlot). See "Periodic jobs" in
// doc.go. What a slot is (cronspec.go) and whether a missed one fires
// ([Missed]) is decided here; the store writes what it is told.

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
	// Lag is how long [PeriodicInfo.NextSlot] has been due, at the
	// moment of the read: 0 while it is still to come or unknown. A lag
	// that keeps growing says that no process fires the schedule.
	Lag time.Duration
}

// periodic is one schedule registered with a scheduler.
type periodic struct {
	def     store.Schedule // as stored: name, spec, kind, queue, location, missed
	slots   *cronSpec
	payload any
	enqueue []EnqueueOption

	done int64 // ms: the latest slot known fired or skipped, by anyone; under scheduler.mu
}

// A scheduler fires the slots of the periodic schedules registered with
// it: from RunDue (before it claims) and Work's loop, which also sleep
// until its next slot (next). It holds the schedules of one Queue; the
// zero value is not ready: use newScheduler.
type scheduler struct {
	st     *storage
	clock  clock.Clock
	enq    *enqueuer // makes the batches that slots insert
	events *emitter
	wake   *signal // the idle Work loops, woken for a new schedule and each job fired

	// known refuses, under Options.RefuseUnknownKinds, a kind that no
	// handler knows (see handledKinds.check).
	known func(ctx context.Context, kind string) error

	mu     sync.Mutex
	byName map[string]*periodic
}

// newScheduler returns a scheduler with no schedules.
func newScheduler(st *storage, clk clock.Clock, enq *enqueuer, events *emitter, wake *signal) *scheduler {
	return &scheduler{st: st, clock: clk, enq: enq, events: events, wake: wake}
}

// list returns the schedules, in name order.
func (s *scheduler) list() []*periodic {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*periodic, 0, len(s.byName))
	for _, name := range slices.Sorted(maps.Keys(s.byName)) {
		out = append(out, s.byName[name])
	}
	return out
}

// register checks and registers the schedule name, storing its
// definition (see Queue.Periodic), and wakes the idle Work loops, which
// set their timers for it.
func (s *scheduler) register(ctx context.Context, name, spec, kind string, payload any, opts []PeriodicOption) error {
	p, err := s.newPeriodic(name, spec, kind, payload, opts)
	if err == nil {
		err = s.known(ctx, kind)
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byName[name]; ok {
		return errors.New("registered already on this Queue")
	}
	now := s.clock.Now()
	first := p.slots.prev(now)
	if first.IsZero() {
		first = now
	}
	err = s.st.write(ctx, func(tx store.Execer) (err error) {
		p.done, err = store.RegisterSchedule(ctx, tx, &p.def, store.MS(first), store.MS(now))
		return err
	})
	if err != nil {
		return err
	}
	if s.byName == nil {
		s.byName = make(map[string]*periodic)
	}
	s.byName[name] = p
	s.wake.fire()
	return nil
}

// newPeriodic checks a registration's arguments.
func (s *scheduler) newPeriodic(name, spec, kind string, payload any, opts []PeriodicOption) (*periodic, error) {
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
	if slots.next(s.clock.Now()).IsZero() {
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
	p := &periodic{slots: slots, payload: payload, enqueue: cfg.enqueue, def: store.Schedule{
		Name: name, Spec: spec, Kind: kind, Location: slots.loc.String(), Missed: string(cfg.missed)}}
	b, err := s.enq.batch(kind, []any{payload}, p.jobOptions(slots.next(s.clock.Now()))) // as a slot's job will be
	if err != nil {
		return nil, err
	}
	p.def.Queue = b.cfg.queue
	return p, nil
}

// jobOptions are the enqueue options of the job for slot.
func (p *periodic) jobOptions(slot time.Time) []EnqueueOption {
	return append(slices.Clip(p.enqueue), At(slot),
		Metadata(PeriodicNameKey, p.def.Name), Metadata(PeriodicSlotKey, slot.Format(time.RFC3339)))
}

// fire fires, or records as skipped, the latest slot of each schedule
// that no one has yet, and returns the earliest next slot (zero: no
// schedule). The caller has entered the Queue or runs inside Work.
func (s *scheduler) fire(ctx context.Context) (time.Time, error) {
	var next time.Time
	for _, p := range s.list() {
		if err := s.fireSlot(ctx, p); err != nil {
			return time.Time{}, fmt.Errorf("litequeue: periodic %q: %w", p.def.Name, err)
		}
		if n := s.nextSlot(p); next.IsZero() || n.Before(next) {
			next = n
		}
	}
	return next, nil
}

// next is the earliest slot of the schedules still to fire (see
// nextSlot), for NextDue; NULL with no schedule.
func (s *scheduler) next() sql.NullInt64 {
	var next sql.NullInt64
	for _, p := range s.list() {
		if slot := s.nextSlot(p); !slot.IsZero() {
			next = store.MinNull(next, sql.NullInt64{Int64: store.MS(slot), Valid: true})
		}
	}
	return next
}

// doneSlot returns the latest slot of p known fired or skipped.
func (s *scheduler) doneSlot(p *periodic) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.done
}

// nextSlot returns when p next has a slot to fire: its latest slot if no
// one has fired it yet (due now), else its next.
func (s *scheduler) nextSlot(p *periodic) time.Time {
	now := s.clock.Now()
	slot := p.slots.prev(now)
	if !slot.IsZero() && store.MS(slot) > s.doneSlot(p) {
		return slot
	}
	return p.slots.next(now)
}

// fireSlot fires p's latest slot, or records it as skipped, unless this
// scheduler knows it is done: a slot evaluated PeriodicGrace late or more
// was missed, and is skipped if p says so.
func (s *scheduler) fireSlot(ctx context.Context, p *periodic) error {
	now := s.clock.Now()
	slot := p.slots.prev(now)
	if slot.IsZero() || store.MS(slot) <= s.doneSlot(p) {
		return nil
	}
	skip := Missed(p.def.Missed) == SkipMissed && now.Sub(slot) >= PeriodicGrace
	batch, err := s.enq.batch(p.def.Kind, []any{p.payload}, p.jobOptions(slot))
	if err == nil && !skip {
		err = s.enq.admit(ctx, batch)
	}
	if err != nil {
		return err
	}
	var job *Job
	err = s.st.write(ctx, func(tx store.Execer) error {
		job = nil
		claimed, err := store.ClaimSlot(ctx, tx, &p.def, store.MS(slot), skip)
		if err != nil || !claimed || skip {
			return err // someone else fired it, or it is skipped
		}
		jobs, err := batch.insert(ctx, tx, now)
		if err != nil {
			return err
		}
		job = jobs[0]
		return store.SetFiredJob(ctx, tx, p.def.Name, job.ID, store.MS(now))
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	p.done = max(p.done, store.MS(slot))
	s.mu.Unlock()
	if job != nil {
		s.wake.fire()
		s.events.enqueued(now, job)
	}
	return nil
}

// stored returns every schedule stored on the database, registered by
// any process, in name order, with its next slot on the scheduler's
// clock; none on a file of a schema older than periodic jobs.
func (s *scheduler) stored(ctx context.Context) ([]PeriodicInfo, error) {
	if !s.st.info.Flow {
		return nil, nil
	}
	rows, err := store.Schedules(ctx, s.st.reads)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := make([]PeriodicInfo, len(rows))
	for i, r := range rows {
		next := nextStored(&r, now)
		out[i] = PeriodicInfo{
			Name: r.Name, Spec: r.Spec, Kind: r.Kind, Queue: r.Queue, Location: r.Location,
			Missed: Missed(r.Missed), LastSlot: store.FromMS(r.LastSlot), LastSkipped: r.LastSkipped,
			LastJobID: r.LastJobID, LastFired: fromMSOrZero(r.FiredAt), RegisteredAt: store.FromMS(r.RegisteredAt),
			NextSlot: next, Lag: lag(next, now),
		}
	}
	return out, nil
}

// nextStored returns the slot that the stored schedule r fires next, as
// seen at now: its latest slot if no one has fired it yet, else its next;
// zero for a location this machine does not know or a spec it cannot
// read.
func nextStored(r *store.ScheduleRow, now time.Time) time.Time {
	loc, err := time.LoadLocation(r.Location)
	if err != nil {
		return time.Time{}
	}
	slots, err := parseSpec(r.Spec, loc)
	if err != nil {
		return time.Time{}
	}
	if s := slots.prev(now); !s.IsZero() && store.MS(s) > r.LastSlot {
		return s
	}
	return slots.next(now)
}

// lag returns how long slot has been due at now: 0 for a zero slot or one
// still to come.
func lag(slot, now time.Time) time.Duration {
	if slot.IsZero() || slot.After(now) {
		return 0
	}
	return now.Sub(slot)
}

// fromMSOrZero is store.FromMS, with 0 the zero time.
func fromMSOrZero(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return store.FromMS(v)
}
