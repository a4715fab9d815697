package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// A Fixture is an engine opened for one test, with what a Queue has on
// it: its read pool and a writer.
type Fixture struct {
	Engine store.Engine
	Reads  *store.Pool
	Writer *store.Writer[struct{}]
}

// Write runs fn in a write transaction of the fixture's writer.
func (f *Fixture) Write(ctx context.Context, fn func(tx store.Execer) error) error {
	return f.Writer.Do(&store.Op[struct{}]{Ctx: ctx, Fn: fn})
}

// NewFixture is the fixture on eng, whose statements and connection it
// closes when the test ends; the caller closes eng.
func NewFixture(tb testing.TB, eng store.Engine) *Fixture {
	tb.Helper()
	info := eng.Info()
	conn, err := store.NewConn(context.Background(), info.Writes, info.Dialect)
	if err != nil {
		tb.Fatal(err)
	}
	reads := store.NewPool(info.Reads, info.Dialect, eng.Lost)
	tb.Cleanup(func() {
		reads.CloseStmts()
		conn.Close()
	})
	return &Fixture{Engine: eng, Reads: reads, Writer: &store.Writer[struct{}]{Engine: eng, Conn: conn, Wake: func() {}}}
}

// OtherWriter returns a writer of its own on the engine, on a connection
// of the app's pool, as another process has: its transactions and the
// fixture writer's take turns on a file, and run side by side on a
// server. Its statements and connection are closed when the test ends.
func (f *Fixture) OtherWriter(tb testing.TB) *store.Writer[struct{}] {
	tb.Helper()
	info := f.Engine.Info()
	conn, err := store.NewConn(context.Background(), info.App, info.Dialect)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return &store.Writer[struct{}]{Engine: f.Engine, Conn: conn, Wake: func() {}}
}

// Run runs the suite that every engine passes, each case on a new,
// empty database that open returns.
func Run(t *testing.T, open func(t *testing.T) *Fixture) {
	for name, test := range map[string]func(*testing.T, *Fixture){
		// Retention, expiry, rescue and the due times (upkeep.go).
		"FinishedJobs":   testFinishedJobs,
		"DeleteFinished": testDeleteFinished,
		"PurgeKeys":      testPurgeKeys,
		"Expiries":       testExpiries,
		"BeforeClaim":    testBeforeClaim,
		"ExpiredLeases":  testExpiredLeases,
		"LockExpired":    testLockExpired,
		"DueTimes":       testDueTimes,

		// Pending jobs by kind, and the window of recent runs (pending.go,
		// recent.go).
		"ClaimByKind":           testClaimByKind,
		"NextPendingPriorities": testNextPendingPriorities,
		"ScheduledThousands":    testScheduledThousands,
		"CompletedWindow":       testCompletedWindow,

		"AddHistory":          testAddHistory,
		"SetHeldRows":         testSetHeldRows,
		"SetHeldRowsRestored": testSetHeldRowsRestored,
		"InsertJobs":          testInsertJobs,
		"Pauses":              testPauses,
		"Starts":              testStarts,
		"Breakers":            testBreakers,
		"CloseBreaker":        testCloseBreaker,
		"ListJobs":            testListJobs,
		"JobByID":             testJobByID,
		"DeleteJob":           testDeleteJob,
		"RequestCancel":       testRequestCancel,
		"DeadJobs":            testDeadJobs,
		"Keys":                testKeys,
		"RecordWorkers":       testRecordWorkers,
		"SilentWorkers":       testSilentWorkers,
		"CountByState":        testCountByState,
		"KeptCounts":          testKeptCounts,
		"CountsOfOtherSQL":    testCountsOfOtherSQL,
		"RepairCounts":        testRepairCounts,
		"CountsBeside":        testCountsBesideWriters,
		"FoldCounts":          testFoldCounts,
		"Failures":            testFailures,
		"RegisterSchedule":    testRegisterSchedule,
		"ClaimSlot":           testClaimSlot,
		"FireSlotAtOnce":      testFireSlotAtOnce,
		"Health":              testHealth,
		"RowCounts":           testRowCounts,
		"RecordKinds":         testRecordKinds,
		"RecordPolicies":      testRecordPolicies,

		// The throughput (throughput.go).
		"Throughput":          testThroughput,
		"ThroughputRollback":  testThroughputRollback,
		"ThroughputShards":    testThroughputShards,
		"ThroughputOwnShards": testThroughputOwnShards,
		"CountEnd":            testCountEnd,
		"DeleteThroughput":    testDeleteThroughput,

		// Job outputs, checkpoints and progress (outputs.go, checkpoints.go,
		// progress.go).
		"SetHeldRowsOutputs": testSetHeldRowsOutputs,
		"Checkpoints":        testCheckpoints,
		"ClaimCheckpoints":   testClaimCheckpoints,
		"Progress":           testProgress,
		"DependEdges":        testDependEdges,
		"DependTogether":     testDependTogether,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, open(t))
		})
	}
}

// insertJob inserts one pending job of kind k, due at once, and returns
// its ID.
func insertJob(t *testing.T, f *Fixture) int64 {
	t.Helper()
	var ids []int64
	err := f.Write(t.Context(), func(tx store.Execer) (err error) {
		ids, err = f.Engine.InsertJobs(t.Context(), tx, &store.NewJobs{Queue: "default", Kind: "k", Payloads: [][]byte{nil}, MaxTries: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids[0]
}

// testAddHistory: the engine's AddHistory adds every row, in order, with
// its text as it was (invalid UTF-8 and NUL bytes included, which a
// server's text stores as U+FFFD), for any number of rows: none, one,
// past the file's chunk of 8 rows a statement, and a server's batch of
// hundreds in one; History reads a job's rows back in
// that order, and none of another job's.
func testAddHistory(t *testing.T, f *Fixture) {
	ctx := t.Context()
	for _, n := range []int{0, 1, 7, 8, 19, 300} {
		id := insertJob(t, f)
		start := time.UnixMilli(1_700_000_000_000).UTC()
		var rows []*store.HistoryRow
		for i := range n {
			rows = append(rows, &store.HistoryRow{
				AttemptRow: store.AttemptRow{
					Attempt: i + 1, StartedAt: store.MS(start.Add(time.Duration(i) * time.Second)),
					FinishedAt: store.MS(start.Add(time.Duration(i)*time.Second + time.Millisecond)),
					Outcome:    "failed", Error: fmt.Sprintf("run %d: \xff\x00 'quoted' \"too\"", i),
					ErrorClass: "*errors.errorString", Delay: int64(i), Worker: fmt.Sprintf("w%d", i),
				},
				JobID: id, Kind: "k", Next: "pending",
			})
		}
		if err := f.Write(ctx, func(tx store.Execer) error { return f.Engine.AddHistory(ctx, tx, rows) }); err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		got, err := store.History(ctx, f.Reads, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d rows added: the history has %d", n, len(got))
		}
		for i, a := range got {
			want := rows[i].AttemptRow
			want.Error = storable(f, want.Error)
			if a != want {
				t.Errorf("%d rows, row %d: got %+v, want %+v", n, i, a, want)
			}
		}
	}
}

// testInsertJobs: InsertJobs returns the new jobs' IDs in the order of
// their payloads, each above the last, and never makes a second live job
// of a unique key.
func testInsertJobs(t *testing.T, f *Fixture) {
	ctx := t.Context()
	payloads := [][]byte{[]byte(`"a"`), nil, []byte(`"c"`)}
	var ids []int64
	err := f.Write(ctx, func(tx store.Execer) (err error) {
		ids, err = f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q", Kind: "k", Payloads: payloads, MaxTries: 3})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(payloads) {
		t.Fatalf("%d IDs for %d payloads", len(ids), len(payloads))
	}
	for i, id := range ids {
		var got []byte
		if err := f.Reads.GetContext(ctx, &got, `SELECT payload FROM litequeue_jobs WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(payloads[i]) || (i > 0 && id <= ids[i-1]) {
			t.Errorf("job %d (ID %d): payload %q, want %q; IDs %v", i, id, got, payloads[i], ids)
		}
	}
	unique := &store.NewJobs{Queue: "q", Kind: "k", Payloads: [][]byte{nil}, MaxTries: 3, UniqueKey: "key"}
	for range 2 {
		f.Write(ctx, func(tx store.Execer) error { // the second: no IDs, or an error
			_, err := f.Engine.InsertJobs(ctx, tx, unique)
			return err
		})
	}
	var live int
	if err := f.Reads.GetContext(ctx, &live, `SELECT count(*) FROM litequeue_jobs WHERE unique_key = ?`, unique.UniqueKey); err != nil {
		t.Fatal(err)
	}
	if live != 1 {
		t.Errorf("two inserts of unique key %q: %d live jobs hold it, want 1", unique.UniqueKey, live)
	}
}
