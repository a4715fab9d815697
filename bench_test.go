package litequeue_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// benchPayload is a ~100-byte JSON payload, as in the performance issue.
var benchPayload = map[string]any{"user_id": 123456, "email": "someone@example.com", "template": "welcome", "locale": "en-GB"}

func benchQueue(b *testing.B) *litequeue.Queue {
	b.Helper()
	q, _ := openQueue(b, litequeue.Options{Clock: clock.New()})
	return q
}

func reportRate(b *testing.B, n int) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "jobs/s")
}

// BenchmarkSQLiteInsertPerCommit is the peer for BenchmarkEnqueue: one
// plain row per transaction on the same driver and settings (WAL, FULL).
func BenchmarkSQLiteInsertPerCommit(b *testing.B) {
	path := filepath.Join(b.TempDir(), "raw.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, kind TEXT, payload BLOB)`); err != nil {
		b.Fatal(err)
	}
	payload := []byte(fmt.Sprint(benchPayload))
	for b.Loop() {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO t (kind, payload) VALUES (?, ?)`, "k", payload); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N)
}

func BenchmarkEnqueue(b *testing.B) {
	q := benchQueue(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := q.Enqueue(ctx, "k", benchPayload); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N)
}

// BenchmarkEnqueueParallel enqueues from 16 goroutines: group commit lets
// them share transactions.
func BenchmarkEnqueueParallel(b *testing.B) {
	q := benchQueue(b)
	ctx := context.Background()
	b.SetParallelism(8) // 8 × GOMAXPROCS goroutines: 16 on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := q.Enqueue(ctx, "k", benchPayload); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportRate(b, b.N)
}

func BenchmarkEnqueueMany1000(b *testing.B) {
	q := benchQueue(b)
	ctx := context.Background()
	payloads := make([]any, 1000)
	for i := range payloads {
		payloads[i] = benchPayload
	}
	for b.Loop() {
		if _, err := q.EnqueueMany(ctx, "k", payloads); err != nil {
			b.Fatal(err)
		}
	}
	reportRate(b, b.N*len(payloads))
}

// fill enqueues n jobs of kind "k" outside the timer.
func fill(b *testing.B, q *litequeue.Queue, n int) {
	b.Helper()
	payloads := make([]any, 1000)
	for i := range payloads {
		payloads[i] = benchPayload
	}
	for n > 0 {
		m := min(n, len(payloads))
		if _, err := q.EnqueueMany(context.Background(), "k", payloads[:m]); err != nil {
			b.Fatal(err)
		}
		n -= m
	}
}

// BenchmarkRunDueDrain runs pre-enqueued no-op jobs one at a time.
func BenchmarkRunDueDrain(b *testing.B) {
	q := benchQueue(b)
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error { return nil })
	fill(b, q, b.N)
	b.ResetTimer()
	n, err := q.RunDue(context.Background())
	if err != nil || n != b.N {
		b.Fatalf("RunDue ran %d of %d: %v", n, b.N, err)
	}
	reportRate(b, n)
}

// BenchmarkWorkDrain drains pre-enqueued no-op jobs with 16 workers.
func BenchmarkWorkDrain(b *testing.B) {
	q := benchQueue(b)
	var done atomic.Int64
	all := make(chan struct{})
	q.Handle("k", func(ctx context.Context, job *litequeue.Job) error {
		if done.Add(1) == int64(b.N) {
			close(all)
		}
		return nil
	})
	fill(b, q, b.N)
	ctx, cancel := context.WithCancel(context.Background())
	b.ResetTimer()
	go q.Work(ctx, litequeue.WorkerOptions{Concurrency: 16})
	<-all
	b.StopTimer()
	cancel()
	reportRate(b, b.N)
}

// BenchmarkStats reads Stats of a database of 1,000, 100,000 and
// 1,000,000 jobs (a seventh each completed, dead, running and cancelled,
// the rest pending across three queues and five kinds, 1% of them
// scheduled, as retries waiting): the figures come from the counts the
// database keeps, and the split of the pending jobs reads the scheduled
// ones, so the time grows with those, not with the jobs. The 1,000,000 jobs take a while
// to write; -benchtime=20x is plenty.
func BenchmarkStats(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			q := benchQueue(b)
			fillMixed(b, q, n)
			ctx := context.Background()
			for b.Loop() {
				if _, err := q.Stats(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fillMixed writes n jobs in every state with one statement per 100,000,
// the app's own, and counts them with RecountJobs (a file counts only
// litequeue's own writes), outside the timer.
func fillMixed(b *testing.B, q *litequeue.Queue, n int) {
	b.Helper()
	now := time.Now().UnixMilli()
	for from := 0; from < n; from += 100_000 {
		_, err := q.DB().Exec(q.DB().Rebind(`WITH RECURSIVE i(x) AS (SELECT CAST(? AS BIGINT) UNION ALL SELECT x + 1 FROM i WHERE x < CAST(? AS BIGINT))
		INSERT INTO litequeue_jobs (queue, kind, payload, state, max_tries, run_at, created_at, finished_at)
		SELECT 'q' || (x % 3), 'k' || (x % 5), ?,
			CASE x % 7 WHEN 0 THEN 'completed' WHEN 1 THEN 'dead' WHEN 2 THEN 'running' WHEN 3 THEN 'cancelled' ELSE 'pending' END,
			8, CAST(? AS BIGINT) + CASE WHEN x % 100 = 0 THEN 3600000 ELSE -x END, CAST(? AS BIGINT),
			CASE WHEN x % 7 IN (0, 1, 3) THEN CAST(? AS BIGINT) END
		FROM i`), from+1, min(from+100_000, n), []byte(`{}`), now, now, now)
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := q.RecountJobs(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
}
