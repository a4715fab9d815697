package litequeue

import (
	"context"
	"fmt"
)

// The periodic schedules as a Queue offers them; the scheduler
// (scheduler.go) holds and fires them.

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
// [PeriodicJob] refuses. Under [Options.RefuseUnknownKinds] it refuses
// a kind that no handler knows, as Enqueue does, at registration: its
// slots are not checked again.
func (q *Queue) Periodic(ctx context.Context, name, spec, kind string, payload any, opts ...PeriodicOption) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if err := q.sched.register(ctx, name, spec, kind, payload, opts); err != nil {
		return fmt.Errorf("litequeue: periodic %q: %w", name, err)
	}
	return nil
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
	infos, err := q.sched.stored(ctx)
	if err != nil {
		return nil, fmt.Errorf("litequeue: periodics: %w", err)
	}
	return infos, nil
}
