package litequeue_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

func register(tb testing.TB, q *litequeue.Queue, name, spec, kind string, opts ...litequeue.PeriodicOption) {
	tb.Helper()
	if err := q.Periodic(tb.Context(), name, spec, kind, nil, opts...); err != nil {
		tb.Fatalf("Periodic(%q, %q): %v", name, spec, err)
	}
}

// TestQueue_Periodic fires a quarter-hourly schedule through RunDue: one
// job per slot, due at its slot, run in the same RunDue call, with
// job.enqueued fired; registering fires no past slot.
func TestQueue_Periodic(t *testing.T) {
	t.Parallel()
	clk := newMock() // 12:00
	clk.Add(7 * time.Minute)
	var ev events
	q, _ := openQueue(t, litequeue.Options{Clock: clk, OnEvent: ev.record})
	ran := 0
	q.Handle("tick", func(ctx context.Context, job *litequeue.Job) error { ran++; return nil })
	register(t, q, "quarter", "*/15 * * * *", "tick", litequeue.PeriodicJob(litequeue.OnQueue("cron"), litequeue.Priority(3)))
	if got := runDue(t, q); got != 0 {
		t.Fatalf("RunDue right after registering at 12:07 ran %d, want 0: the 12:00 slot is past", got)
	}
	next, ok, err := q.NextDue(t.Context())
	if err != nil || !ok || !next.Equal(epoch.Add(15*time.Minute)) {
		t.Fatalf("NextDue = %v, %v, %v; want 12:15", next, ok, err)
	}
	for range 4 {
		next, _, _ := q.NextDue(t.Context())
		clk.Set(next)
		if got := runDue(t, q); got != 1 {
			t.Fatalf("RunDue at %v ran %d, want 1", next, got)
		}
		if got := runDue(t, q); got != 0 {
			t.Fatalf("RunDue again at %v ran %d, want 0", next, got)
		}
	}
	jobs := periodicJobs(t, q, "tick")
	if diff := cmp.Diff(slots(epoch.Add(15*time.Minute), 15*time.Minute, 4), slotsOf(jobs)); diff != "" {
		t.Errorf("slots fired (-want +got):\n%s", diff)
	}
	for _, j := range jobs {
		if j.State != litequeue.Completed || j.Queue != "cron" || j.Priority != 3 || j.Metadata[litequeue.PeriodicNameKey] != "quarter" {
			t.Errorf("job %d = %+v, want completed, on queue cron, priority 3, of schedule quarter", j.ID, j)
		}
	}
	if ran != 4 || ev.count("job.enqueued") != 4 {
		t.Errorf("%d runs, %d job.enqueued events; want 4 and 4", ran, ev.count("job.enqueued"))
	}
}

// TestQueue_PeriodicSundaySeven registers a spec with 7 for Sunday, as
// cron(8) takes it, and fires its slot on the Sunday after the Thursday
// of epoch.
func TestQueue_PeriodicSundaySeven(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("tick", func(ctx context.Context, job *litequeue.Job) error { return nil })
	register(t, q, "sundays", "0 0 * * 7", "tick")
	sunday := time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)
	next, ok, err := q.NextDue(t.Context())
	if err != nil || !ok || !next.Equal(sunday) {
		t.Fatalf("NextDue = %v, %v, %v; want %v", next, ok, err, sunday)
	}
	clk.Set(sunday)
	if got := runDue(t, q); got != 1 {
		t.Fatalf("RunDue on %v ran %d, want 1", sunday, got)
	}
	if diff := cmp.Diff([]time.Time{sunday}, slotsOf(periodicJobs(t, q, "tick"))); diff != "" {
		t.Errorf("slots fired (-want +got):\n%s", diff)
	}
}

// TestQueue_PeriodicDowntime restarts after three hours with no process
// on the file: the latest missed slot fires one job (CatchUpOne) or is
// skipped (SkipMissed), never a burst; the next slot fires as usual.
func TestQueue_PeriodicDowntime(t *testing.T) {
	t.Parallel()
	for _, mode := range []litequeue.Missed{litequeue.CatchUpOne, litequeue.SkipMissed} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q, path := openQueue(t, litequeue.Options{Clock: clk})
			register(t, q, "quarter", "*/15 * * * *", "tick", litequeue.OnMissed(mode))
			clk.Set(epoch.Add(15 * time.Minute))
			runDue(t, q)
			q.Close()

			clk.Set(epoch.Add(3*time.Hour + 20*time.Minute)) // 15:20: 12:30 … 15:15 missed
			q = openAt(t, path, litequeue.Options{Clock: clk})
			register(t, q, "quarter", "*/15 * * * *", "tick", litequeue.OnMissed(mode))
			runDue(t, q)
			want := []time.Time{epoch.Add(15 * time.Minute).UTC()}
			if mode == litequeue.CatchUpOne {
				want = append(want, epoch.Add(3*time.Hour+15*time.Minute).UTC())
			}
			if diff := cmp.Diff(want, slotsOf(periodicJobs(t, q, "tick"))); diff != "" {
				t.Errorf("slots fired after the restart (-want +got):\n%s", diff)
			}
			infos, err := q.Periodics(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(infos) != 1 || !infos[0].LastSlot.Equal(epoch.Add(3*time.Hour+15*time.Minute)) || infos[0].LastSkipped != (mode == litequeue.SkipMissed) {
				t.Errorf("Periodics = %+v, want last slot 15:15, skipped %v", infos, mode == litequeue.SkipMissed)
			}

			clk.Set(epoch.Add(3*time.Hour + 30*time.Minute))
			runDue(t, q)
			want = append(want, epoch.Add(3*time.Hour+30*time.Minute).UTC())
			if diff := cmp.Diff(want, slotsOf(periodicJobs(t, q, "tick"))); diff != "" {
				t.Errorf("slots fired at 15:30 (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueue_PeriodicGrace: a slot evaluated less than PeriodicGrace late
// is on time, and fires even with SkipMissed; later it is skipped.
func TestQueue_PeriodicGrace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec string
		slot time.Duration // after 12:00
		late time.Duration
		want int
	}{
		{"*/15 * * * *", 15 * time.Minute, litequeue.PeriodicGrace - time.Second, 1},
		{"*/15 * * * *", 15 * time.Minute, litequeue.PeriodicGrace, 0},
		{"@every 2m", 2 * time.Minute, litequeue.PeriodicGrace - time.Second, 1},
		{"@every 2m", 2 * time.Minute, litequeue.PeriodicGrace, 0},
	}
	for _, tt := range tests {
		t.Run(tt.spec+"/"+tt.late.String(), func(t *testing.T) {
			t.Parallel()
			clk := newMock()
			q, _ := openQueue(t, litequeue.Options{Clock: clk})
			register(t, q, "s", tt.spec, "tick", litequeue.OnMissed(litequeue.SkipMissed))
			clk.Set(epoch.Add(tt.slot + tt.late))
			runDue(t, q)
			if got := len(periodicJobs(t, q, "tick")); got != tt.want {
				t.Errorf("evaluated %v late: %d jobs, want %d", tt.late, got, tt.want)
			}
		})
	}
}

// TestQueue_PeriodicDST steps a schedule through the days the clocks
// change, with NextDue and RunDue, counting the jobs of each local day.
func TestQueue_PeriodicDST(t *testing.T) {
	t.Parallel()
	tests := []struct {
		loc, date, spec string
		want            int
		first           time.Time // the first slot, if checked
	}{
		{"Europe/Berlin", "2026-03-29", "*/15 * * * *", 92, time.Time{}},
		{"Europe/Berlin", "2026-03-29", "0 * * * *", 23, time.Time{}},
		{"Europe/Berlin", "2026-03-29", "30 2 * * *", 1, time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)}, // 03:00 CEST
		{"Europe/Berlin", "2026-10-25", "*/15 * * * *", 100, time.Time{}},
		{"Europe/Berlin", "2026-10-25", "0 * * * *", 25, time.Time{}},
		{"Europe/Berlin", "2026-10-25", "30 2 * * *", 1, time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)}, // 02:30 CEST
		{"America/New_York", "2026-03-08", "*/15 * * * *", 92, time.Time{}},
		{"America/New_York", "2026-03-08", "0 * * * *", 23, time.Time{}},
		{"America/New_York", "2026-03-08", "30 2 * * *", 1, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)}, // 03:00 EDT
		{"America/New_York", "2026-11-01", "*/15 * * * *", 100, time.Time{}},
		{"America/New_York", "2026-11-01", "0 * * * *", 25, time.Time{}},
		{"America/New_York", "2026-11-01", "30 1 * * *", 1, time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)}, // 01:30 EDT
		{"America/New_York", "2026-11-01", "30 2 * * *", 1, time.Date(2026, 11, 1, 7, 30, 0, 0, time.UTC)}, // 02:30 EST
	}
	for _, tt := range tests {
		t.Run(tt.loc+"/"+tt.date+"/"+tt.spec, func(t *testing.T) {
			t.Parallel()
			loc, err := time.LoadLocation(tt.loc)
			if err != nil {
				t.Fatal(err)
			}
			day, _ := time.ParseInLocation(time.DateOnly, tt.date, loc)
			end := day.AddDate(0, 0, 1)
			clk := newMock()
			clk.Set(day.Add(-time.Second))
			q, _ := openQueue(t, litequeue.Options{Clock: clk})
			register(t, q, "s", tt.spec, "tick", litequeue.PeriodicIn(loc))
			for {
				next, ok, err := q.NextDue(t.Context())
				if err != nil || !ok {
					t.Fatalf("NextDue: %v, %v", ok, err)
				}
				if !next.Before(end) {
					break
				}
				clk.Set(next)
				runDue(t, q)
			}
			jobs := slotsOf(periodicJobs(t, q, "tick"))
			if len(jobs) != tt.want {
				t.Fatalf("%d jobs on %s, want %d: %v", len(jobs), tt.date, tt.want, jobs)
			}
			if !tt.first.IsZero() && !jobs[0].Equal(tt.first) {
				t.Errorf("first job's slot %v, want %v", jobs[0], tt.first)
			}
		})
	}
}

// TestQueue_PeriodicBadInput: each bad registration is refused with an
// error naming what is wrong, and registers nothing.
func TestQueue_PeriodicBadInput(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	register(t, q, "taken", "@hourly", "tick")
	tests := []struct {
		name, spec, kind string
		opts             []litequeue.PeriodicOption
		want             string // in the error
	}{
		{"", "@hourly", "tick", nil, "empty name"},
		{"four", "*/15 * * *", "tick", nil, `"*/15 * * *": expected exactly 5 fields, found 4`},
		{"minute", "61 * * * *", "tick", nil, `"61 * * * *": end of range (61) above maximum (59)`},
		{"word", "@fortnightly", "tick", nil, `"@fortnightly": unrecognized descriptor`},
		{"never", "0 0 30 2 *", "tick", nil, `"0 0 30 2 *" never fires`},
		{"nil-loc", "@daily", "tick", []litequeue.PeriodicOption{litequeue.PeriodicIn(nil)}, "nil location"},
		{"tz", "CRON_TZ=Europe/Berlin 0 9 * * *", "tick", nil, "PeriodicIn"},
		{"fast", "@every 500ms", "tick", nil, "interval 500ms is below the minimum of 1s"},
		{"every", "@every often", "tick", nil, `"@every often": time: invalid duration "often"`},
		{"missed", "@hourly", "tick", []litequeue.PeriodicOption{litequeue.OnMissed("all")}, `unknown Missed "all"`},
		{"unique", "@hourly", "tick", []litequeue.PeriodicOption{litequeue.PeriodicJob(litequeue.UniqueKey("k"))}, `UniqueKey "k"`},
		{"delay", "@hourly", "tick", []litequeue.PeriodicOption{litequeue.PeriodicJob(litequeue.Delay(time.Minute))}, "Delay or At"},
		{"tries", "@hourly", "tick", []litequeue.PeriodicOption{litequeue.PeriodicJob(litequeue.MaxTries(99))}, "max_tries 99 is outside 1…50"},
		{"kind", "@hourly", "", nil, "empty kind"},
		{"taken", "@daily", "tick", nil, `"taken": registered already`},
	}
	for _, tt := range tests {
		err := q.Periodic(t.Context(), tt.name, tt.spec, tt.kind, nil, tt.opts...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Periodic(%q, %q) = %v, want an error with %q", tt.name, tt.spec, err, tt.want)
		}
	}
	infos, err := q.Periodics(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Spec != "@hourly" {
		t.Errorf("Periodics = %+v, want only taken, @hourly", infos)
	}
}

// TestQueue_Periodics reads the schedules as stored, also from a
// read-only Queue, with the definition of the newest registration.
func TestQueue_Periodics(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	register(t, q, "quarter", "*/15 * * * *", "tick")
	register(t, q, "morning", "0 9 * * MON-FRI", "report", litequeue.PeriodicIn(berlin),
		litequeue.OnMissed(litequeue.SkipMissed), litequeue.PeriodicJob(litequeue.OnQueue("reports")))
	clk.Set(epoch.Add(15 * time.Minute))
	runDue(t, q)
	job := periodicJobs(t, q, "tick")[epoch.Add(15*time.Minute).UTC()]

	// Another process registers "quarter" anew, with another spec: its
	// definition is stored, and this Queue fires nothing for it.
	q2 := openAt(t, path, litequeue.Options{Clock: clk})
	register(t, q2, "quarter", "*/30 * * * *", "tick")

	want := []litequeue.PeriodicInfo{
		{Name: "morning", Spec: "0 9 * * MON-FRI", Kind: "report", Queue: "reports", Location: "Europe/Berlin",
			Missed: litequeue.SkipMissed, LastSlot: time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC), // Thu 09:00 CET
			NextSlot: time.Date(2026, 1, 2, 8, 0, 0, 0, time.UTC), RegisteredAt: epoch},
		{Name: "quarter", Spec: "*/30 * * * *", Kind: "tick", Queue: "default", Location: "UTC",
			Missed: litequeue.CatchUpOne, LastSlot: epoch.Add(15 * time.Minute), LastJobID: job.ID,
			LastFired: epoch.Add(15 * time.Minute), NextSlot: epoch.Add(30 * time.Minute), RegisteredAt: epoch.Add(15 * time.Minute)},
	}
	check := func(q *litequeue.Queue, what string) {
		t.Helper()
		got, err := q.Periodics(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(time.Time.Equal)); diff != "" {
			t.Errorf("Periodics of %s (-want +got):\n%s", what, diff)
		}
	}
	check(q, "the Queue")
	if !onPostgres {
		ro, err := litequeue.OpenReadOnly(path, litequeue.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		check(ro, "a read-only Queue")
	}

	clk.Set(epoch.Add(30 * time.Minute))
	runDue(t, q) // its "*/15" is no longer the stored definition
	if got := len(periodicJobs(t, q, "tick")); got != 1 {
		t.Errorf("%d jobs after the Queue of the old definition ran at 12:30, want 1", got)
	}
	runDue(t, q2)
	if got := len(periodicJobs(t, q, "tick")); got != 2 {
		t.Errorf("%d jobs after the Queue of the new definition ran at 12:30, want 2", got)
	}
}

// TestQueue_PeriodicWork: Work fires each slot when it comes on the
// injected clock, and runs its job.
func TestQueue_PeriodicWork(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	ran := make(chan time.Time, 10)
	q.Handle("tick", func(ctx context.Context, job *litequeue.Job) error { ran <- job.RunAt; return nil })
	register(t, q, "quarter", "*/15 * * * *", "tick")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- q.Work(ctx, litequeue.WorkerOptions{}) }()
	for i := 1; i <= 3; i++ {
		slot := epoch.Add(time.Duration(i) * 15 * time.Minute)
		clk.Set(slot)
		var got time.Time
		waitFor(t, "the slot's job to run", func() bool {
			select {
			case got = <-ran:
				return true
			default:
				clk.Add(10 * time.Millisecond) // for a Work loop that set its timer before the clock moved
				return false
			}
		})
		if !got.Equal(slot) {
			t.Fatalf("ran the job of %v, want %v", got, slot)
		}
	}
	cancel()
	waitClosed(t, "Work to return", waitErr(done))
	if got := len(periodicJobs(t, q, "tick")); got != 3 {
		t.Errorf("%d jobs, want 3", got)
	}
}

// waitErr closes the returned channel once done delivers.
func waitErr(done <-chan error) <-chan struct{} {
	ch := make(chan struct{})
	go func() { <-done; close(ch) }()
	return ch
}

// TestWork_PeriodicTimer: an idle Work sets its timer for the next slot,
// not only for its next poll: with the clock set exactly to the slot, the
// job runs, with nothing else moving the clock. In a synctest bubble,
// where synctest.Wait tells when Work sleeps.
func TestWork_PeriodicTimer(t *testing.T) {
	fileOnly(t, "a synctest bubble cannot wait on a server's connections")
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clk := newMock()
		clk.Set(epoch.Add(15*time.Minute - 500*time.Millisecond)) // the next poll is at 12:15:00.5
		q, _ := openQueue(t, litequeue.Options{Clock: clk})
		ran := make(chan time.Time, 1)
		q.Handle("tick", func(ctx context.Context, job *litequeue.Job) error { ran <- job.RunAt; return nil })
		register(t, q, "quarter", "*/15 * * * *", "tick")
		stop := startWork(t, q, litequeue.WorkerOptions{})
		synctest.Wait() // Work sleeps
		clk.Set(epoch.Add(15 * time.Minute))
		synctest.Wait()
		select {
		case got := <-ran:
			if !got.Equal(epoch.Add(15 * time.Minute)) {
				t.Errorf("ran the job of %v, want 12:15", got)
			}
		default:
			t.Errorf("no job ran at the slot")
		}
		if err := stop(); err != nil {
			t.Errorf("Work returned %v", err)
		}
	})
}

// TestQueue_PeriodicRedefined: a schedule registered again with another
// spec starts at the new spec's latest slot, as a new one does, rather
// than catch up a slot the old spec never had.
func TestQueue_PeriodicRedefined(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, path := openQueue(t, litequeue.Options{Clock: clk})
	register(t, q, "s", "@daily", "tick")
	q.Close()
	clk.Add(7 * time.Minute) // 12:07
	q = openAt(t, path, litequeue.Options{Clock: clk})
	register(t, q, "s", "*/15 * * * *", "tick")
	runDue(t, q)
	if got := len(periodicJobs(t, q, "tick")); got != 0 {
		t.Errorf("%d jobs after redefining at 12:07, want none: 12:00 is before the registration", got)
	}
	clk.Add(8 * time.Minute)
	runDue(t, q)
	if diff := cmp.Diff([]time.Time{epoch.Add(15 * time.Minute).UTC()}, slotsOf(periodicJobs(t, q, "tick"))); diff != "" {
		t.Errorf("slots (-want +got):\n%s", diff)
	}
}

// periodicJobs returns the jobs of kind, each by the slot its metadata
// names, failing the test if a slot has two or a job's RunAt is not its
// slot while it is pending.
func periodicJobs(tb testing.TB, q *litequeue.Queue, kind string) map[time.Time]*litequeue.Job {
	tb.Helper()
	jobs, err := q.List(tb.Context(), litequeue.Filter{Kind: kind})
	if err != nil {
		tb.Fatal(err)
	}
	bySlot := make(map[time.Time]*litequeue.Job)
	for _, j := range jobs {
		slot, err := time.Parse(time.RFC3339, j.Metadata[litequeue.PeriodicSlotKey])
		if err != nil {
			tb.Fatalf("job %d: slot: %v", j.ID, err)
		}
		slot = slot.UTC()
		if prev, ok := bySlot[slot]; ok {
			tb.Fatalf("slot %v fired twice: jobs %d and %d", slot, prev.ID, j.ID)
		}
		if j.State == litequeue.Pending && !j.RunAt.Equal(slot) { // success clears RunAt
			tb.Fatalf("job %d: RunAt %v, want its slot %v", j.ID, j.RunAt, slot)
		}
		bySlot[slot] = j
	}
	return bySlot
}

// slots returns the UTC times from first, every step, n of them.
func slots(first time.Time, step time.Duration, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = first.Add(time.Duration(i) * step).UTC()
	}
	return out
}

// slotsOf returns the slots of the jobs, in order.
func slotsOf(jobs map[time.Time]*litequeue.Job) []time.Time {
	var out []time.Time
	for s := range jobs {
		out = append(out, s)
	}
	sortTimes(out)
	return out
}

func sortTimes(ts []time.Time) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Before(ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// TestQueue_PeriodicsLag reads a schedule's lag: 0 while its next slot is
// to come, how long the slot has waited once it is due and unfired, and 0
// again once RunDue fired it.
func TestQueue_PeriodicsLag(t *testing.T) {
	t.Parallel()
	clk := newMock() // 12:00
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	q.Handle("tick", ok)
	register(t, q, "quarter", "*/15 * * * *", "tick")
	lag := func(what string, want time.Duration, next time.Time) {
		t.Helper()
		infos, err := q.Periodics(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != 1 || infos[0].Lag != want || !infos[0].NextSlot.Equal(next) {
			t.Errorf("Periodics %s: %+v, want Lag %v and NextSlot %v", what, infos, want, next)
		}
	}
	lag("at the registration", 0, epoch.Add(15*time.Minute))
	clk.Set(epoch.Add(15*time.Minute + 40*time.Second))
	lag("40s after a slot", 40*time.Second, epoch.Add(15*time.Minute))
	runDue(t, q)
	lag("once fired", 0, epoch.Add(30*time.Minute))
}
