package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// asynqSystem drives an asynq client and server against the Redis that
// run.sh starts on a free loopback port (its durability is run.sh's
// setting; see RESULTS.md).
type asynqSystem struct {
	opt    asynq.RedisClientOpt
	client *asynq.Client
	srv    *asynq.Server
	mux    *asynq.ServeMux
	retry  bool
}

const asynqTask = "email"

func openAsynq(ctx context.Context, cfg config, t *tracker) (system, error) {
	if cfg.redisAddr == "" {
		return nil, fmt.Errorf("%w: no Redis (run.sh starts one when redis-server is installed)", errUnsupported)
	}
	if cfg.workload == "batch" {
		return nil, fmt.Errorf("%w: asynq v0.26.0 has no batch enqueue", errUnsupported)
	}
	// A fresh store for every run (but the pickup producer's, which
	// enqueues on the store of its run's workers).
	if !cfg.producer {
		rdb := redis.NewClient(&redis.Options{Addr: cfg.redisAddr})
		err := rdb.FlushAll(ctx).Err()
		rdb.Close()
		if err != nil {
			return nil, fmt.Errorf("flush redis: %w", err)
		}
	}
	opt := asynq.RedisClientOpt{Addr: cfg.redisAddr}
	srvCfg := asynq.Config{
		Concurrency: workers,
		LogLevel:    asynq.WarnLevel,
	}
	if cfg.retry() {
		srvCfg.RetryDelayFunc = func(int, error, *asynq.Task) time.Duration { return retryDelay }
		// Retries wait in a sorted set that a forwarder moves back to
		// the queue every DelayedTaskCheckInterval (default 5s): at the
		// default no retry could happen 10ms after its failure.
		srvCfg.DelayedTaskCheckInterval = retryDelay
	}
	mux := asynq.NewServeMux()
	mux.HandleFunc(asynqTask, func(ctx context.Context, task *asynq.Task) error {
		var args jobArgs
		if err := json.Unmarshal(task.Payload(), &args); err != nil {
			return err
		}
		return t.run(args)
	})
	return &asynqSystem{
		opt:    opt,
		client: asynq.NewClient(opt),
		srv:    asynq.NewServer(opt, srvCfg),
		mux:    mux,
		retry:  cfg.retry(),
	}, nil
}

func (s *asynqSystem) enqueue(ctx context.Context, seq int) error {
	body, err := json.Marshal(newArgs(seq))
	if err != nil {
		return err
	}
	var opts []asynq.Option
	if s.retry {
		opts = append(opts, asynq.MaxRetry(retryFailures))
	}
	_, err = s.client.EnqueueContext(ctx, asynq.NewTask(asynqTask, body), opts...)
	return err
}

func (s *asynqSystem) enqueueBatch(ctx context.Context, seqs []int) error {
	return fmt.Errorf("%w: asynq v0.26.0 has no batch enqueue", errUnsupported)
}

func (s *asynqSystem) start(ctx context.Context) error { return s.srv.Start(s.mux) }

func (s *asynqSystem) stop() error {
	s.srv.Shutdown() // waits for the active handlers
	return nil
}

// unfinished counts the tasks left in the queue in any state: a finished
// task is deleted (no retention).
func (s *asynqSystem) unfinished(ctx context.Context) (int, error) {
	insp := asynq.NewInspector(s.opt)
	defer insp.Close()
	info, err := insp.GetQueueInfo("default")
	if errors.Is(err, asynq.ErrQueueNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return info.Pending + info.Active + info.Scheduled + info.Retry + info.Archived + info.Aggregating, nil
}

func (s *asynqSystem) stored(ctx context.Context) ([]int, error) {
	insp := asynq.NewInspector(s.opt)
	defer insp.Close()
	var payloads [][]byte
	for page := 1; ; page++ {
		tasks, err := insp.ListPendingTasks("default", asynq.PageSize(1000), asynq.Page(page))
		if err != nil {
			return nil, err
		}
		for _, t := range tasks {
			payloads = append(payloads, t.Payload)
		}
		if len(tasks) < 1000 {
			return seqsOf(payloads)
		}
	}
}

func (s *asynqSystem) close() error { return s.client.Close() }
