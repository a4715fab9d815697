package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// riverArgs is the job's arguments as River wants them: a kind.
type riverArgs struct {
	jobArgs
}

func (riverArgs) Kind() string { return "email" }

type riverWorker struct {
	river.WorkerDefaults[riverArgs]
	t     *tracker
	retry bool
}

func (w *riverWorker) Work(ctx context.Context, job *river.Job[riverArgs]) error {
	return w.t.run(job.Args.jobArgs)
}

// NextRetry sets the retry workload's constant 10ms delay; the zero time
// leaves River's default policy in charge.
func (w *riverWorker) NextRetry(job *river.Job[riverArgs]) time.Time {
	if w.retry {
		return time.Now().Add(retryDelay)
	}
	return time.Time{}
}

// riverClient is a River client migrated and set up for one workload, on
// either driver: the part of a River peer that does not depend on its
// store.
type riverClient[TTx any] struct {
	client *river.Client[TTx]
}

// riverFetch is how often a River client fetches jobs: at most once per
// cooldown, and at least once per poll interval.
type riverFetch struct {
	cooldown, poll time.Duration
	why            string // where the values come from
}

var (
	// riverDefaults is River's own defaults: its drain on either driver
	// is bound near MaxWorkers (16) jobs per 100 ms cooldown.
	riverDefaults = riverFetch{river.FetchCooldownDefault, river.FetchPollIntervalDefault, "River's defaults"}
	// riverTuned is River's fetch loop tuned for throughput and latency,
	// the river-tuned and river-postgres-tuned peers.
	riverTuned = riverFetch{time.Millisecond, 50 * time.Millisecond, "tuned"}
)

// String describes f by River's names for its fields, for RESULTS.md.
func (f riverFetch) String() string {
	return fmt.Sprintf("FetchCooldown %v, FetchPollInterval %v (%s)", f.cooldown, f.poll, f.why)
}

// newRiverClient migrates the driver's store up with rivermigrate and makes
// a client with 16 workers of the default queue, fetching as fetch says.
func newRiverClient[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], fetch riverFetch, cfg config, t *tracker) (riverClient[TTx], error) {
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return riverClient[TTx]{}, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return riverClient[TTx]{}, err
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, &riverWorker{t: t, retry: cfg.retry()})
	rc := &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:           ws,
		FetchCooldown:     fetch.cooldown,
		FetchPollInterval: fetch.poll,
		Logger:            slog.New(slog.DiscardHandler), // a failed attempt logs at error level
	}
	if cfg.retry() {
		rc.MaxAttempts = retryTries
	}
	client, err := river.NewClient(driver, rc)
	return riverClient[TTx]{client: client}, err
}

func (c riverClient[TTx]) enqueue(ctx context.Context, seq int) error {
	_, err := c.client.Insert(ctx, riverArgs{newArgs(seq)}, nil)
	return err
}

func (c riverClient[TTx]) enqueueBatch(ctx context.Context, seqs []int) error {
	params := make([]river.InsertManyParams, len(seqs))
	for i, seq := range seqs {
		params[i] = river.InsertManyParams{Args: riverArgs{newArgs(seq)}}
	}
	_, err := c.client.InsertMany(ctx, params)
	return err
}

func (c riverClient[TTx]) start(ctx context.Context) error {
	return c.client.Start(context.Background())
}

func (c riverClient[TTx]) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.client.Stop(ctx)
}

// riverSystem drives a River client on the riversqlite driver, over one
// modernc.org/sqlite connection as River's docs advise.
type riverSystem struct {
	riverClient[*sql.Tx]
	db *sql.DB
}

// riverPeer is River on SQLite, fetching as fetch says.
func riverPeer(fetch riverFetch) peerSpec {
	return peerSpec{open: openRiver(fetch), settings: "riversqlite, one connection; " + fetch.String()}
}

// openRiver returns the opener of a River peer on SQLite that fetches as
// fetch says.
func openRiver(fetch riverFetch) opener {
	return func(ctx context.Context, cfg config, t *tracker) (system, error) {
		db, err := openSQLite(ctx, cfg.path)
		if err != nil {
			return nil, err
		}
		c, err := newRiverClient(ctx, riversqlite.New(db), fetch, cfg, t)
		if err != nil {
			db.Close()
			return nil, err
		}
		return &riverSystem{riverClient: c, db: db}, nil
	}
}

func (s *riverSystem) unfinished(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE state <> 'completed'`).Scan(&n)
	return n, err
}

// stored reads the args of the available jobs (River keeps them as JSONB).
func (s *riverSystem) stored(ctx context.Context) ([]int, error) {
	args, err := queryBlobs(ctx, s.db, `SELECT json(args) FROM river_job WHERE state = 'available'`)
	if err != nil {
		return nil, err
	}
	return seqsOf(args)
}

func (s *riverSystem) close() error { return s.db.Close() }
