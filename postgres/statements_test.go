package postgres_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// statements counts the statements that the connections of a pool send
// to the server, by their first words: a pgx tracer of each query, and of
// each prepare, whose name a prepared statement's execution gives.
type statements struct {
	mu     sync.Mutex
	names  map[string]string // prepared statement's name → its SQL
	counts map[string]int
}

// space is a run of white space, which head makes one blank.
var space = regexp.MustCompile(`\s+`)

// head is the first words of query, by which statements counts it.
func head(query string) string {
	q := space.ReplaceAllString(strings.TrimSpace(query), " ")
	if len(q) > 60 {
		q = q[:60]
	}
	return q
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := data.SQL
	if full, ok := s.names[q]; ok {
		q = full
	}
	s.counts[head(q)]++
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statements) TracePrepareStart(ctx context.Context, _ *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[data.Name] = data.SQL
	return ctx
}

func (s *statements) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// count returns how many statements began with prefix.
func (s *statements) count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for h, c := range s.counts {
		if strings.HasPrefix(h, prefix) {
			n += c
		}
	}
	return n
}

// String lists the counts, most first.
func (s *statements) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	for h, c := range s.counts {
		lines = append(lines, fmt.Sprintf("%6d  %s", c, h))
	}
	slices.Sort(lines)
	slices.Reverse(lines)
	return strings.Join(lines, "\n")
}

// tracedQueue opens a Queue on dsn whose pool's statements st counts.
func tracedQueue(t *testing.T, dsn string, st *statements, opts litequeue.Options) *litequeue.Queue {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = st
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	q, err := postgres.OpenDB(t.Context(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// TestDrain_Statements drains 3,000 jobs with 16 workers and counts the
// statements sent, and so the round trips of the writer's transactions:
// the ends of a writer batch are settled in one statement (an UPDATE of
// every row FROM unnest, and an INSERT of their history rows, in one
// WITH), so no statement writes one job's row alone (there is no lost
// lease to decide again) nor adds history apart; the pool's runs ask for
// their next jobs in one claim per transaction, which reads no pauses
// (nothing is paused, and no limit's lock was waited for); a durable
// batch begins and reads its transaction's ID in one round trip that the
// tracer does not see, and reads no ID before its COMMIT. A transaction
// takes at most 6 round trips: BEGIN, the settle, what comes before the
// claim, the claim, its lease, COMMIT (and 3 more when Work's own claim
// shares it). The counts are logged (go test -v).
func TestDrain_Statements(t *testing.T) {
	t.Parallel()
	const jobs = 3000
	dsn := pgtest.DSN(t)
	st := &statements{names: map[string]string{}, counts: map[string]int{}}
	q := tracedQueue(t, dsn, st, litequeue.Options{})
	if _, err := q.EnqueueMany(t.Context(), "k", make([]any, jobs)); err != nil {
		t.Fatal(err)
	}
	var done sync.WaitGroup
	done.Add(jobs)
	q.Handle("k", func(context.Context, *litequeue.Job) error {
		done.Done()
		return nil
	})
	runWork(t, q, litequeue.WorkerOptions{Concurrency: 16})
	done.Wait()
	waitFor(t, "every job completed", func() bool {
		n, err := q.Count(t.Context(), litequeue.Filter{State: litequeue.Completed})
		return err == nil && n == jobs
	})
	t.Logf("statements of a drain of %d jobs:\n%s", jobs, st)
	commits, begins := st.count("COMMIT"), st.count("BEGIN")
	settles, alone := st.count("WITH v AS ( SELECT * FROM unnest"), st.count("UPDATE litequeue_jobs SET state = $1")
	history := st.count("INSERT INTO litequeue_attempts")
	xids := st.count("SELECT CAST(pg_current_xact_id_if_assigned() AS text)")
	claims, leases := st.count("SELECT id, queue, kind, payload"), st.count("UPDATE litequeue_jobs AS j SET state = 'running'")
	before, pauses := st.count("SELECT EXISTS (SELECT id FROM litequeue_jobs"), st.count("SELECT scope, name, since FROM litequeue_paused")
	if settles == 0 || alone != 0 || history != 0 {
		t.Errorf("%d settles of a batch, %d writes of one job's row, %d history INSERTs apart; want some, none, none",
			settles, alone, history)
	}
	if light := commits - settles; begins > light || xids > light {
		t.Errorf("%d BEGINs and %d reads of the transaction's ID sent alone in %d transactions, of which %d settled ends; want at most %d",
			begins, xids, commits, settles, light)
	}
	// The chained claims of a batch are one; Work's own claim of its free
	// places may share the batch's transaction now and then.
	extra := max(0, claims-commits)
	if extra > commits/4 || leases > claims || pauses != 0 {
		t.Errorf("%d claims, %d leases, %d reads of pauses in %d transactions; want about a claim per transaction, a lease at most per claim, no pauses read",
			claims, leases, pauses, commits)
	}
	// A transaction begins once, traced or not, and commits once; an
	// extra claim costs its 3.
	if trips := 2*commits + settles + xids + before + claims + leases; trips > 6*commits+3*extra {
		t.Errorf("%d round trips in %d transactions with %d extra claims; want at most 6 each, and 3 an extra claim", trips, commits, extra)
	}
}
