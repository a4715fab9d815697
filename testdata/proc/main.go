// Command proc is a litequeue process for the reliability tests
// (process_test.go, and the *_unix_test.go files that need another
// process): it enqueues or works on a shared file until it is
// killed, stopped or done, and reports what it did on stdout.
//
//	proc enqueue DB N            enqueue N jobs, printing each ID once acknowledged
//	proc work DB NAME STARTS     work "slow" jobs; append "id attempt name" to STARTS per start
//	proc mixed DB NAME STARTS N  enqueue N "slow" jobs while working, until every job in the file is done
//	proc reopen DB N             enqueue N jobs, open and close the file a second time (read-only),
//	                             print "reopened", and after a line on stdin enqueue N more, then wait
//	                             to be killed; each ID is printed once acknowledged
//	proc apptx DB NAME N HOW     enqueue N "order" jobs and make N app transactions while working, until
//	                             every "order" job in the file is done; HOW is "writetx" (WriteTx) or "plain" (DB())
//	proc periodic DB START       fire the schedule "quarter" on a mock clock from START (see periodic.go)
//	proc expire DB LATE          run due "timed" jobs once, printing "ran ID STATE-OF-LATE" for each (see expire.go)
//	proc checkpoint DB           run due "upload" jobs once, saving checkpoints, and wait to be killed (see checkpoint.go)
//	proc diamond DB NAME STARTS  work "node" jobs of dependency graphs, appending "id attempt name ready" to STARTS
//	                             per start (see diamond.go)
//	proc replicate DB CHECKPOINT SECONDS
//	                             enqueue and work for SECONDS on a file an outside replicator copies, with
//	                             Options.Checkpoint CHECKPOINT (see replicate.go)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "proc:", err)
		os.Exit(1)
	}
}

// errorsSeen counts errors logged by the queue: a test fails on any.
type errorsSeen struct {
	slog.Handler
	mu sync.Mutex
	n  int
}

func (h *errorsSeen) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.mu.Lock()
		h.n++
		h.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

// open opens the queue at db: a file, or a PostgreSQL server's schema
// given by a postgres:// URL.
func open(db string, logs *errorsSeen) (*litequeue.Queue, error) {
	opts := litequeue.Options{
		VisibilityTimeout: time.Second,
		Retry:             litequeue.Policy{Backoff: litequeue.Constant, Base: 50 * time.Millisecond, MaxTries: 50},
		Logger:            slog.New(logs),
	}
	if strings.HasPrefix(db, "postgres://") {
		return postgres.Open(context.Background(), db, opts)
	}
	return litequeue.Open(db, opts)
}

func run(args []string) error {
	if len(args) < 2 {
		return errors.New("usage: proc enqueue|work|mixed|reopen|apptx|expire|replicate DB ...")
	}
	logs := &errorsSeen{Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})}
	if args[0] == "replicate" {
		return replicate(args[1:], logs)
	}
	q, err := open(args[1], logs)
	if err != nil {
		return err
	}
	defer q.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	switch args[0] {
	case "enqueue":
		n, _ := strconv.Atoi(args[2])
		for i := range n {
			j, err := q.Enqueue(ctx, "slow", i)
			if err != nil {
				return err
			}
			fmt.Println(j.ID) // acknowledged: the commit is durable
		}
		return nil
	case "work":
		handle(q, args[2], args[3])
		return q.Work(ctx, litequeue.WorkerOptions{Concurrency: 4, Name: args[2], ShutdownGrace: time.Second})
	case "mixed":
		return mixed(ctx, q, logs, args[2], args[3], args[4])
	case "reopen":
		return reopen(ctx, q, args[1], args[2])
	case "periodic":
		return periodic(ctx, args[1], args[2], logs)
	case "expire":
		return expire(ctx, q, args[2:])
	case "apptx":
		n, _ := strconv.Atoi(args[3])
		return appTx(ctx, q, logs, args[2], n, args[4])
	case "pause", "resume":
		return pause(ctx, q, args[0], args[2], args[3])
	case "limits":
		return limits(ctx, q, logs, args[2], args[3])
	case "checkpoint":
		return checkpoint(ctx, q)
	case "diamond":
		return diamond(ctx, q, args[2], args[3])
	}
	return fmt.Errorf("unknown mode %q", args[0])
}

// handle registers the "slow" handler: it records its start, sleeps the
// payload's milliseconds, and completes the job together with its side
// effect, one row in effects, in one transaction.
func handle(q *litequeue.Queue, name, starts string) {
	log, err := os.OpenFile(starts, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	// On a server, processes creating the table at once may each fail
	// once on the catalog's unique index: try again.
	for try := 1; ; try++ {
		_, err := q.DB().Exec(`CREATE TABLE IF NOT EXISTS effects (job_id INTEGER NOT NULL, worker TEXT NOT NULL)`)
		if err == nil {
			break
		}
		if try == 3 {
			panic(err)
		}
	}
	q.Handle("slow", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, ms int) error {
		fmt.Fprintf(log, "%d %d %s\n", job.ID, job.Attempt, name) // one write: lines never interleave
		select {
		case <-time.After(time.Duration(ms%200) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		tx, err := q.DB().BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO effects (job_id, worker) VALUES (?, ?)`), job.ID, name); err != nil {
			return err
		}
		if err := q.CompleteTx(ctx, tx, job); err != nil {
			return err
		}
		return tx.Commit()
	}))
}

// mixed enqueues n jobs while working, measuring the slowest enqueue, and
// stops once no job in the file is pending or running. It prints a JSON
// report.
func mixed(ctx context.Context, q *litequeue.Queue, logs *errorsSeen, name, starts, count string) error {
	n, _ := strconv.Atoi(count)
	handle(q, name, starts)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Work(wctx, litequeue.WorkerOptions{Concurrency: 8, Name: name, ShutdownGrace: time.Second})
	}()
	var slowest time.Duration
	for i := range n {
		start := time.Now()
		if _, err := q.Enqueue(ctx, "slow", i%20); err != nil {
			cancel()
			return fmt.Errorf("enqueue: %w", err)
		}
		slowest = max(slowest, time.Since(start))
	}
	for {
		live := 0
		for _, s := range []litequeue.State{litequeue.Pending, litequeue.Running} {
			jobs, err := q.List(ctx, litequeue.Filter{State: s, Limit: 1})
			if err != nil {
				cancel()
				return err
			}
			live += len(jobs)
		}
		if live == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"slowest_enqueue_ms": slowest.Milliseconds(),
		"errors_logged":      logs.n,
	})
}

// reopen enqueues n jobs, opens the file a second time with OpenReadOnly
// and closes that Queue again, waits for a line on stdin, enqueues n more
// and waits until it is killed (or stdin ends).
func reopen(ctx context.Context, q *litequeue.Queue, path, count string) error {
	n, _ := strconv.Atoi(count)
	enqueue := func() error {
		for i := range n {
			j, err := q.Enqueue(ctx, "slow", i)
			if err != nil {
				return err
			}
			fmt.Println(j.ID)
		}
		return nil
	}
	if err := enqueue(); err != nil {
		return err
	}
	ro, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		return err
	}
	if err := ro.Close(); err != nil {
		return err
	}
	fmt.Println("reopened")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return nil
	}
	if err := enqueue(); err != nil {
		return err
	}
	for in.Scan() {
	}
	return nil
}

// appTx runs the app's own write transactions beside litequeue's, on
// tables the test created: effects, app_ledger and app_counter. Its
// "order" handler writes its effect exactly once (SeenTx, the insert,
// MarkTx and CompleteTx in one transaction), and between its n enqueues
// it makes n transactions that each add a ledger row and increment the
// counter. With how "writetx" every transaction runs in WriteTx; with
// "plain", on DB() directly. It stops once no "order" job in the file is
// pending or running, and prints a JSON report of the errors it met.
func appTx(ctx context.Context, q *litequeue.Queue, logs *errorsSeen, name string, n int, how string) error {
	inTx := func(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
		if how == "writetx" {
			return q.WriteTx(ctx, fn)
		}
		tx, err := q.DB().BeginTxx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	}
	var mu sync.Mutex
	var errs []string
	failed := func(what string, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, what+": "+err.Error())
	}
	q.Handle("order", func(ctx context.Context, job *litequeue.Job) error {
		key := "order-" + strconv.FormatInt(job.ID, 10)
		err := inTx(ctx, func(tx *sqlx.Tx) error {
			if ok, err := q.SeenTx(ctx, tx, key); err != nil || ok {
				return err
			}
			if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO effects (job_id, worker) VALUES (?, ?)`), job.ID, name); err != nil {
				return err
			}
			if err := q.MarkTx(ctx, tx, key, time.Hour); err != nil {
				return err
			}
			return q.CompleteTx(ctx, tx, job)
		})
		if err != nil {
			failed("handler", err)
		}
		return err
	})
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- q.Work(wctx, litequeue.WorkerOptions{Concurrency: 8, Name: name, ShutdownGrace: time.Second})
	}()
	committed := 0
	for i := range n {
		if _, err := q.Enqueue(ctx, "order", i); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		err := inTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO app_ledger (proc, i) VALUES (?, ?)`), name, i); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE app_counter SET n = n + 1`); err != nil {
				return err
			}
			time.Sleep(time.Millisecond) // the app's work inside its transaction
			return nil
		})
		if err != nil {
			failed("app transaction", err)
			continue
		}
		committed++
	}
	for !allDone(ctx, q, "order") {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"app_tx_committed": committed,
		"errors":           errs,
		"errors_logged":    logs.n,
	})
}

// allDone reports whether no job of the kind is pending or running.
func allDone(ctx context.Context, q *litequeue.Queue, kind string) bool {
	for _, s := range []litequeue.State{litequeue.Pending, litequeue.Running} {
		jobs, err := q.List(ctx, litequeue.Filter{State: s, Kind: kind, Limit: 1})
		if err != nil || len(jobs) > 0 {
			return false
		}
	}
	return true
}
