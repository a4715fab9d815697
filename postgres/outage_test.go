package postgres_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
)

// TestServerRestart restarts the server as a crash would while 8
// goroutines enqueue in a loop, one reads, and a Work on another Queue
// runs the jobs: no call fails, every job acknowledged is there
// afterwards, once, no other job is, and Work runs each once — also when
// the crash cut off a COMMIT and gave its transaction's ID again (see
// TestEngine_XactStatus), which 2 runs of 10 on a busy machine did before
// the commit markers.
func TestServerRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	clk := clock.NewMock()
	q := open(t, srv.DSN, clk)
	runs := runCounter(t, open(t, srv.DSN, clk))
	var (
		mu   sync.Mutex
		ids  []int64
		errs []error
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for g := range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				j, err := q.Enqueue(t.Context(), "k", fmt.Sprint(g, "-", i))
				if err != nil {
					fail(fmt.Errorf("Enqueue: %w", err))
					continue
				}
				mu.Lock()
				ids = append(ids, j.ID)
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for !stop.Load() {
			if _, err := q.List(t.Context(), litequeue.Filter{Limit: 10}); err != nil {
				fail(fmt.Errorf("List: %w", err))
			}
			if _, err := q.Stats(t.Context()); err != nil {
				fail(fmt.Errorf("Stats: %w", err))
			}
		}
	})
	acked := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(ids)
	}
	waitFor(t, "jobs enqueued before the restart", func() bool { return acked() >= 100 })
	srv.Restart(t)
	before := acked()
	waitFor(t, "jobs enqueued after the restart", func() bool { return acked() >= before+100 })
	stop.Store(true)
	wg.Wait()

	for i, err := range errs {
		if i == 10 {
			t.Errorf("… and %d more errors", len(errs)-10)
			break
		}
		t.Errorf("%v", err)
	}
	table := tableJobs(t, srv.DSN)
	if len(table) != len(ids) {
		t.Errorf("%d jobs in the table, want the %d acknowledged", len(table), len(ids))
	}
	for _, id := range ids {
		if _, err := q.Get(t.Context(), id); err != nil {
			t.Errorf("acknowledged job %d: %v", id, err)
		}
	}
	// A claim whose COMMIT the crash cut off, of unknown outcome (a light
	// write has no commit marker), left its jobs running under leases that
	// no run holds: once nothing has changed for 2s, the clock moves past
	// their expiry, and the rescue brings them back, as it would in time.
	last, since := -1, time.Now()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var left int
		if err := q.DB().Get(&left, `SELECT COUNT(*) FROM litequeue_jobs WHERE state <> 'completed'`); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs not completed a minute after the last enqueue", left)
		}
		if left != last {
			last, since = left, time.Now()
		} else if time.Since(since) > 2*time.Second {
			clk.Add(litequeue.DefaultVisibilityTimeout + time.Second)
			since = time.Now()
		}
	}
	for _, id := range table {
		if n := runs(id); n != 1 {
			t.Errorf("job %d ran %d times, want once", id, n)
		}
	}
}

// runCounter runs jobs of kind "k" with Work on q until the test ends,
// and returns how many times a job ran.
func runCounter(t *testing.T, q *litequeue.Queue) func(id int64) int {
	var mu sync.Mutex
	runs := make(map[int64]int)
	q.Handle("k", func(ctx context.Context, j *litequeue.Job) error {
		mu.Lock()
		runs[j.ID]++
		mu.Unlock()
		return nil
	})
	runWork(t, q, litequeue.WorkerOptions{})
	return func(id int64) int {
		mu.Lock()
		defer mu.Unlock()
		return runs[id]
	}
}

// TestEnqueue_ServerStopped stops the server for good: Enqueue tries again
// for litequeue.ServerRetry and fails with ErrServerGone, or fails so when
// its context ends first; reads fail the same way.
func TestEnqueue_ServerStopped(t *testing.T) {
	t.Parallel()
	srv := pgtest.NewServer(t)
	q := open(t, srv.DSN, clock.NewMock())
	if _, err := q.Enqueue(t.Context(), "k", nil); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)

	start := time.Now()
	_, err := q.Enqueue(t.Context(), "k", nil)
	took := time.Since(start)
	if !errors.Is(err, litequeue.ErrServerGone) || errors.Is(err, litequeue.ErrCommitUnknown) {
		t.Errorf("Enqueue with the server stopped = %v, want ErrServerGone (and not ErrCommitUnknown)", err)
	}
	if took < litequeue.ServerRetry || took > litequeue.ServerRetry+5*time.Second {
		t.Errorf("Enqueue failed after %v, want after about %v of retries", took, litequeue.ServerRetry)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start = time.Now()
	_, err = q.Enqueue(ctx, "k", nil)
	took = time.Since(start)
	if !errors.Is(err, litequeue.ErrServerGone) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Enqueue with a context of 1s = %v, want ErrServerGone and context.DeadlineExceeded", err)
	}
	if took > 3*time.Second {
		t.Errorf("Enqueue with a context of 1s failed after %v", took)
	}

	ctx, cancel = context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := q.List(ctx, litequeue.Filter{}); !errors.Is(err, litequeue.ErrServerGone) {
		t.Errorf("List with the server stopped = %v, want ErrServerGone", err)
	}
}

// TestEnqueue_CommitReplyLost loses the server's answer to the writer's
// COMMIT, which took effect: Enqueue asks the server, once it can, and
// returns the job without running its write again.
func TestEnqueue_CommitReplyLost(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	p := newCommitCutter(t, dsn)
	q := open(t, p.dsn, clock.NewMock())
	p.armed.Store(true)
	j, err := q.Enqueue(t.Context(), "k", "once")
	if err != nil {
		t.Fatalf("Enqueue whose COMMIT's answer was lost: %v", err)
	}
	if p.armed.Load() {
		t.Fatal("no COMMIT's answer was cut")
	}
	jobs := tableJobs(t, dsn)
	if len(jobs) != 1 || jobs[0] != j.ID {
		t.Fatalf("jobs in the table: %v, want only job %d, which Enqueue returned", jobs, j.ID)
	}
}

// TestEnqueue_CommitAborted ends the writer's session on the server while
// its COMMIT runs (a deferred trigger sleeps in it), so that the COMMIT
// takes no effect: Enqueue, told so by the server, runs its write again
// and returns the job, the only one in the table.
func TestEnqueue_CommitAborted(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	q := open(t, dsn, clock.NewMock())
	admin := adminDB(t, dsn)
	if _, err := admin.Exec(`CREATE SEQUENCE slow_commits;
		CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('slow_commits') = 1 THEN PERFORM pg_sleep(60); END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON litequeue_jobs
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		j   *litequeue.Job
		err error
	}
	done := make(chan result, 1)
	go func() {
		j, err := q.Enqueue(t.Context(), "k", "once")
		done <- result{j, err}
	}()
	var pid int
	waitFor(t, "the COMMIT to sleep", func() bool {
		err := admin.QueryRow(`SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event = 'PgSleep'`).Scan(&pid)
		return err == nil
	})
	if _, err := admin.Exec(`SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("Enqueue whose COMMIT was aborted: %v", r.err)
	}
	jobs := tableJobs(t, dsn)
	if len(jobs) != 1 || jobs[0] != r.j.ID {
		t.Fatalf("jobs in the table: %v, want only job %d, which Enqueue returned", jobs, r.j.ID)
	}
}

// tableJobs returns the IDs of the jobs in the table, read on a
// connection of its own.
func tableJobs(t *testing.T, dsn string) []int64 {
	t.Helper()
	rows, err := adminDB(t, dsn).Query(`SELECT id FROM litequeue_jobs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// A commitCutter forwards the connections of a DSN to its server and,
// once armed, cuts the first connection whose server answers a COMMIT,
// dropping the answer: the COMMIT took effect, and the client cannot
// know, as when the network fails at that moment.
type commitCutter struct {
	dsn    string // the DSN through the cutter
	server string // host:port
	ln     net.Listener
	armed  atomic.Bool
}

func newCommitCutter(t *testing.T, dsn string) *commitCutter {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		t.Fatalf("the commit cutter needs a postgres:// URL, not the DSN of %s", pgtest.EnvVar)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c := &commitCutter{server: u.Host, ln: ln}
	u.Host = ln.Addr().String()
	v := u.Query()
	v.Set("sslmode", "disable") // the messages are read in the clear
	u.RawQuery = v.Encode()
	c.dsn = u.String()
	go c.serve()
	return c
}

func (c *commitCutter) serve() {
	for {
		client, err := c.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", c.server)
		if err != nil {
			client.Close()
			continue
		}
		go func() {
			io.Copy(server, client)
			server.Close()
		}()
		go c.answers(server, client)
	}
}

// answers passes on the server's messages to the client, each a type
// byte and a length, but the one it cuts at.
func (c *commitCutter) answers(server, client net.Conn) {
	defer client.Close()
	defer server.Close()
	r := bufio.NewReader(server)
	for {
		msg := make([]byte, 5)
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		msg = append(msg, make([]byte, binary.BigEndian.Uint32(msg[1:])-4)...)
		if _, err := io.ReadFull(r, msg[5:]); err != nil {
			return
		}
		if msg[0] == 'C' && string(msg[5:]) == "COMMIT\x00" && c.armed.CompareAndSwap(true, false) {
			return
		}
		if _, err := client.Write(msg); err != nil {
			return
		}
	}
}
