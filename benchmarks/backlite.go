package main

import (
	"context"
	"database/sql"
	"time"

	"github.com/mikestefanello/backlite"
)

// backlite's queue configuration belongs to the task type, so the retry
// workload has a type of its own.
type (
	blTask      struct{ jobArgs }
	blRetryTask struct{ jobArgs }
)

// Config: one try (backlite's MaxAttempts 0 would mean no try is retried
// either), no retention of finished tasks (backlite's default).
func (blTask) Config() backlite.QueueConfig {
	return backlite.QueueConfig{Name: "email", MaxAttempts: 1}
}

func (blRetryTask) Config() backlite.QueueConfig {
	return backlite.QueueConfig{Name: "email-retry", MaxAttempts: retryTries, Backoff: retryDelay}
}

// backliteSystem drives a backlite client and its dispatcher.
type backliteSystem struct {
	db     *sql.DB
	client *backlite.Client
	retry  bool
	cancel context.CancelFunc
}

func openBacklite(ctx context.Context, cfg config, t *tracker) (system, error) {
	db, err := openSQLite(ctx, cfg.path)
	if err != nil {
		return nil, err
	}
	client, err := backlite.NewClient(backlite.ClientConfig{
		DB:           db,
		NumWorkers:   workers,
		ReleaseAfter: 10 * time.Minute, // as in backlite's README
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := client.Install(); err != nil {
		db.Close()
		return nil, err
	}
	client.Register(backlite.NewQueue(func(ctx context.Context, task blTask) error {
		return t.run(task.jobArgs)
	}))
	client.Register(backlite.NewQueue(func(ctx context.Context, task blRetryTask) error {
		return t.run(task.jobArgs)
	}))
	return &backliteSystem{db: db, client: client, retry: cfg.retry()}, nil
}

func (s *backliteSystem) task(seq int) backlite.Task {
	if s.retry {
		return blRetryTask{newArgs(seq)}
	}
	return blTask{newArgs(seq)}
}

func (s *backliteSystem) enqueue(ctx context.Context, seq int) error {
	_, err := s.client.Add(s.task(seq)).Ctx(ctx).Save()
	return err
}

// enqueueBatch adds the tasks with one Add: one transaction.
func (s *backliteSystem) enqueueBatch(ctx context.Context, seqs []int) error {
	tasks := make([]backlite.Task, len(seqs))
	for i, seq := range seqs {
		tasks[i] = s.task(seq)
	}
	_, err := s.client.Add(tasks...).Ctx(ctx).Save()
	return err
}

func (s *backliteSystem) start(ctx context.Context) error {
	dctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.client.Start(dctx)
	return nil
}

func (s *backliteSystem) stop() error {
	if s.cancel == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.client.Stop(ctx) // waits for the workers to finish their tasks
	s.cancel()
	return nil
}

// unfinished counts the tasks left: a finished task's row is deleted.
func (s *backliteSystem) unfinished(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM backlite_tasks`).Scan(&n)
	return n, err
}

func (s *backliteSystem) stored(ctx context.Context) ([]int, error) {
	tasks, err := queryBlobs(ctx, s.db, `SELECT task FROM backlite_tasks WHERE claimed_at IS NULL`)
	if err != nil {
		return nil, err
	}
	return seqsOf(tasks)
}

func (s *backliteSystem) close() error { return s.db.Close() }
