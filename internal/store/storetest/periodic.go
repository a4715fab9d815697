package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The cases of the periodic schedules (store/periodic.go).

// slot0 is a quarter hour, in Unix ms, at which the schedules of the
// cases start.
var slot0 = store.MS(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))

const quarter = int64(15 * time.Minute / time.Millisecond)

// quarterly is a schedule of the cases: every quarter hour, in UTC.
func quarterly(name string) *store.Schedule {
	return &store.Schedule{Name: name, Spec: "*/15 * * * *", Kind: "tick", Queue: "default", Location: "UTC", Missed: "one"}
}

// written runs fn in a write transaction of the fixture's writer and
// returns its result; an error ends the test.
func written[T any](t *testing.T, f *Fixture, fn func(ctx context.Context, tx store.Execer) (T, error)) T {
	t.Helper()
	var v T
	err := f.Write(t.Context(), func(tx store.Execer) (err error) {
		v, err = fn(t.Context(), tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// registerSchedule registers s, starting at first, at now, and returns
// the last slot stored.
func registerSchedule(t *testing.T, f *Fixture, s *store.Schedule, first, now int64) int64 {
	t.Helper()
	return written(t, f, func(ctx context.Context, tx store.Execer) (int64, error) {
		return store.RegisterSchedule(ctx, tx, s, first, now)
	})
}

// schedules reads every stored schedule.
func schedules(t *testing.T, f *Fixture) []store.ScheduleRow {
	t.Helper()
	rows, err := store.Schedules(t.Context(), f.Reads)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// testRegisterSchedule: a new schedule starts at its first slot; a
// registration with the same spec and location keeps the last slot (a
// slot missed meanwhile is caught up), one that changes either moves it
// up to its first slot, never back; every registration stores its
// definition. Schedules reads them in name order.
func testRegisterSchedule(t *testing.T, f *Fixture) {
	s := quarterly("quarter")
	if got := registerSchedule(t, f, s, slot0, slot0+7); got != slot0 {
		t.Fatalf("new schedule: last slot %d, want its first, %d", got, slot0)
	}
	later := slot0 + 4*quarter
	if got := registerSchedule(t, f, s, later, later+7); got != slot0 {
		t.Errorf("same definition again: last slot %d, want the stored %d", got, slot0)
	}
	moved := *s
	moved.Location = "Europe/Berlin"
	if got := registerSchedule(t, f, &moved, slot0-quarter, later+8); got != slot0 {
		t.Errorf("new location, earlier first slot: last slot %d, want the stored %d", got, slot0)
	}
	moved.Spec, moved.Kind, moved.Queue, moved.Missed = "0 * * * *", "tock", "cron", "skip"
	if got := registerSchedule(t, f, &moved, later, later+9); got != later {
		t.Errorf("new spec, later first slot: last slot %d, want the new first %d", got, later)
	}
	other := quarterly("another")
	registerSchedule(t, f, other, slot0, slot0)
	want := []store.ScheduleRow{
		{Schedule: *other, LastSlot: slot0, RegisteredAt: slot0},
		{Schedule: moved, LastSlot: later, RegisteredAt: later + 9},
	}
	if got := schedules(t, f); !slices.Equal(got, want) {
		t.Errorf("Schedules:\ngot  %+v\nwant %+v", got, want)
	}
}

// claimSlot claims slot of s in a transaction of its own.
func claimSlot(t *testing.T, f *Fixture, s *store.Schedule, slot int64, skipped bool) bool {
	t.Helper()
	return written(t, f, func(ctx context.Context, tx store.Execer) (bool, error) {
		return store.ClaimSlot(ctx, tx, s, slot, skipped)
	})
}

// testClaimSlot: ClaimSlot moves the last slot up, once per slot, only
// for the stored definition's spec, location and kind, and records
// whether the slot was skipped; SetFiredJob records the slot's job.
func testClaimSlot(t *testing.T, f *Fixture) {
	s := quarterly("quarter")
	registerSchedule(t, f, s, slot0, slot0)
	next := slot0 + quarter
	for name, c := range map[string]struct {
		change func(*store.Schedule)
		slot   int64
	}{
		"the last slot": {func(*store.Schedule) {}, slot0},
		"an older slot": {func(*store.Schedule) {}, slot0 - quarter},
		"another spec":  {func(s *store.Schedule) { s.Spec = "*/5 * * * *" }, next},
		"another zone":  {func(s *store.Schedule) { s.Location = "Europe/Berlin" }, next},
		"another kind":  {func(s *store.Schedule) { s.Kind = "tock" }, next},
		"another name":  {func(s *store.Schedule) { s.Name = "hourly" }, next},
	} {
		other := *s
		c.change(&other)
		if claimSlot(t, f, &other, c.slot, false) {
			t.Errorf("%s: claimed slot %d", name, c.slot)
		}
	}
	if !claimSlot(t, f, s, next, true) || claimSlot(t, f, s, next, false) {
		t.Fatalf("slot %d, after %d: not claimed once", next, slot0)
	}
	if got := schedules(t, f)[0]; got.LastSlot != next || !got.LastSkipped {
		t.Errorf("after a skipped slot: %+v, want last slot %d, skipped", got, next)
	}
	next += quarter
	if !claimSlot(t, f, s, next, false) {
		t.Fatalf("slot %d: not claimed", next)
	}
	written(t, f, func(ctx context.Context, tx store.Execer) (any, error) {
		return nil, store.SetFiredJob(ctx, tx, s.Name, 42, next+3)
	})
	want := store.ScheduleRow{Schedule: *s, LastSlot: next, LastJobID: 42, FiredAt: next + 3, RegisteredAt: slot0}
	if got := schedules(t, f)[0]; got != want {
		t.Errorf("after a fired slot: got %+v, want %+v", got, want)
	}
}

// testFireSlotAtOnce: of the transactions that fire one slot at once, on
// the writer's connection and on another (as another process's would),
// one claims it, and so one job is inserted for it. Those of one writer
// share a transaction; the writers' transactions take turns on the file
// and run side by side on a server.
func testFireSlotAtOnce(t *testing.T, f *Fixture) {
	ctx := t.Context()
	s := quarterly("quarter")
	registerSchedule(t, f, s, slot0, slot0)
	slot := slot0 + quarter
	writers := []*store.Writer[struct{}]{f.Writer, f.OtherWriter(t)}
	fired := make([]int64, 8) // by firing, the job it inserted
	var wg sync.WaitGroup
	for i := range fired {
		wg.Go(func() {
			err := writers[i%len(writers)].Do(&store.Op[struct{}]{Ctx: ctx, Fn: func(tx store.Execer) (err error) {
				fired[i], err = fireSlot(ctx, f.Engine, tx, s, slot)
				return err
			}})
			if err != nil {
				t.Errorf("firing %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	var jobs []int64
	for _, id := range fired {
		if id != 0 {
			jobs = append(jobs, id)
		}
	}
	var n int
	if err := f.Reads.GetContext(ctx, &n, `SELECT count(*) FROM litequeue_jobs WHERE kind = ?`, s.Kind); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || n != 1 {
		t.Fatalf("%d firings of one slot at once: %d claimed it (jobs %v), %d jobs inserted; want 1 and 1", len(fired), len(jobs), jobs, n)
	}
	if got := schedules(t, f)[0]; got.LastSlot != slot || got.LastJobID != jobs[0] {
		t.Errorf("schedule after the firings: %+v, want last slot %d, job %d", got, slot, jobs[0])
	}
}

// fireSlot fires slot of s in tx as a Queue does: the job's insert and
// its record only if ClaimSlot changed the row. It returns the job's ID,
// or 0 if someone else fired the slot.
func fireSlot(ctx context.Context, eng store.Engine, tx store.Execer, s *store.Schedule, slot int64) (int64, error) {
	claimed, err := store.ClaimSlot(ctx, tx, s, slot, false)
	if err != nil || !claimed {
		return 0, err
	}
	ids, err := eng.InsertJobs(ctx, tx, &store.NewJobs{Queue: s.Queue, Kind: s.Kind, Payloads: [][]byte{nil}, MaxTries: 1, RunAt: slot, CreatedAt: slot})
	if err != nil {
		return 0, err
	}
	return ids[0], store.SetFiredJob(ctx, tx, s.Name, ids[0], slot)
}
