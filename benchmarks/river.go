package main

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
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
	return w.t.run(job.Args.Seq)
}

// NextRetry sets the retry workload's constant 10ms delay; the zero time
// leaves River's default policy in charge.
func (w *riverWorker) NextRetry(job *river.Job[riverArgs]) time.Time {
	if w.retry {
		return time.Now().Add(retryDelay)
	}
	return time.Time{}
}

// riverSystem drives a River client on the riversqlite driver, over one
// modernc.org/sqlite connection as River's docs advise.
type riverSystem struct {
	db     *sql.DB
	client *river.Client[*sql.Tx]
}

func openRiver(ctx context.Context, cfg config, t *tracker) (system, error) {
	db, err := openSQLite(ctx, cfg.path)
	if err != nil {
		return nil, err
	}
	driver := riversqlite.New(db)
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		db.Close()
		return nil, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		db.Close()
		return nil, err
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, &riverWorker{t: t, retry: cfg.retry()})
	rc := &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers: ws,
		Logger:  slog.New(slog.DiscardHandler), // a failed attempt logs at error level
	}
	if cfg.retry() {
		rc.MaxAttempts = retryTries
	}
	client, err := river.NewClient(driver, rc)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &riverSystem{db: db, client: client}, nil
}

func (s *riverSystem) enqueue(ctx context.Context, seq int) error {
	_, err := s.client.Insert(ctx, riverArgs{newArgs(seq)}, nil)
	return err
}

func (s *riverSystem) enqueueBatch(ctx context.Context, seqs []int) error {
	params := make([]river.InsertManyParams, len(seqs))
	for i, seq := range seqs {
		params[i] = river.InsertManyParams{Args: riverArgs{newArgs(seq)}}
	}
	_, err := s.client.InsertMany(ctx, params)
	return err
}

func (s *riverSystem) start(ctx context.Context) error {
	return s.client.Start(context.Background())
}

func (s *riverSystem) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.client.Stop(ctx)
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
