package store

import "context"

// The periodic schedules: one row of litequeue_periodic per schedule
// name, the same SQL on every engine. Firing a slot is one write, with no
// leader: the conditional update of the schedule's row (ClaimSlot), and
// the job's insert only where it changed the row, so that one job fires
// per slot whatever the number of processes. What a slot is, and whether
// a missed one fires, is the root's to decide.

// A Schedule is a periodic schedule's definition as stored: its spec,
// read in location (a time zone name), fires jobs of kind on queue, and
// missed says what a missed slot does ("one" or "skip").
type Schedule struct {
	Name     string `db:"name"`
	Spec     string `db:"spec"`
	Kind     string `db:"kind"`
	Queue    string `db:"queue"`
	Location string `db:"location"`
	Missed   string `db:"missed"`
}

// A ScheduleRow is a row of litequeue_periodic: a schedule's definition,
// as the newest registration stored it, and its latest slot. Times are
// Unix milliseconds; FiredAt and LastJobID are 0 until a slot fires.
type ScheduleRow struct {
	Schedule
	LastSlot     int64 `db:"last_slot"`    // the latest slot fired or skipped
	LastSkipped  bool  `db:"last_skipped"` // LastSlot was skipped
	LastJobID    int64 `db:"last_job_id"`  // the job of the latest slot fired
	FiredAt      int64 `db:"fired_at"`     // when that job was enqueued
	RegisteredAt int64 `db:"registered_at"`
}

// registerScheduleSQL stores a schedule's definition. A new schedule
// starts at its latest slot; a changed spec or location moves the last
// slot up to the new schedule's latest, so that registering fires no past
// slot, and an unchanged one keeps it, so that a slot missed while every
// process was down is caught up. It returns the last slot stored.
const registerScheduleSQL = `INSERT INTO litequeue_periodic
	(name, spec, kind, queue, location, missed, last_slot, registered_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (name) DO UPDATE SET
		last_slot = CASE WHEN (litequeue_periodic.spec <> excluded.spec OR litequeue_periodic.location <> excluded.location)
			AND excluded.last_slot > litequeue_periodic.last_slot
			THEN excluded.last_slot ELSE litequeue_periodic.last_slot END,
		spec = excluded.spec, kind = excluded.kind, queue = excluded.queue, location = excluded.location,
		missed = excluded.missed, registered_at = excluded.registered_at
	RETURNING last_slot`

// RegisterSchedule stores s as the definition of the schedule s.Name,
// registered at now, and returns the schedule's last slot as stored: first
// for a new schedule, and for one whose spec or location changed, if
// first is later than its last slot; else the last slot it had.
func RegisterSchedule(ctx context.Context, tx Execer, s *Schedule, first, now int64) (int64, error) {
	var last int64
	err := tx.GetContext(ctx, &last, registerScheduleSQL, s.Name, s.Spec, s.Kind, s.Queue,
		s.Location, s.Missed, first, now)
	return last, err
}

const (
	// claimSlotSQL moves a schedule's last slot up to the slot, if no one
	// did: whoever comes second changes nothing (on a server, the UPDATE
	// reads the row again once it holds its lock).
	claimSlotSQL = `UPDATE litequeue_periodic SET last_slot = ?, last_skipped = ?
		WHERE name = ? AND last_slot < ? AND spec = ? AND location = ? AND kind = ?`
	setFiredJobSQL = `UPDATE litequeue_periodic SET last_job_id = ?, fired_at = ? WHERE name = ?`
)

// ClaimSlot moves the last slot of the schedule s.Name up to slot,
// recording it as skipped or not, and reports whether it did: only while
// the stored spec, location and kind are s's and the last slot is
// earlier. Of the transactions that claim one slot, on any engine and in
// any process, one changes the row; the others, which see its commit
// (the file's writers take turns; a server's UPDATE waits for the row's
// lock and reads it again), change nothing and get false.
func ClaimSlot(ctx context.Context, tx Execer, s *Schedule, slot int64, skipped bool) (bool, error) {
	skip := 0
	if skipped {
		skip = 1
	}
	res, err := tx.ExecContext(ctx, claimSlotSQL, slot, skip, s.Name, slot, s.Spec, s.Location, s.Kind)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// SetFiredJob records the job with ID job, enqueued at, as that of the
// latest slot of the schedule name.
func SetFiredJob(ctx context.Context, tx Execer, name string, job, at int64) error {
	_, err := tx.ExecContext(ctx, setFiredJobSQL, job, at, name)
	return err
}

const schedulesSQL = `SELECT name, spec, kind, queue, location, missed, last_slot, last_skipped,
	last_job_id, fired_at, registered_at FROM litequeue_periodic ORDER BY name`

// Schedules reads every stored schedule, in name order. A database
// without the table (a file of a schema older than version 5, read
// without being migrated) fails the read: see Info.Flow.
func Schedules(ctx context.Context, ex Execer) ([]ScheduleRow, error) {
	return selectAll[ScheduleRow](ctx, ex, schedulesSQL)
}
