package main

import (
	"context"
	"errors"
	"time"

	"github.com/litequeue/litequeue"
)

// lqSystem drives litequeue through its public API only, on whichever store
// its Queue was opened: the file (openLitequeue) or a PostgreSQL database
// (openLitequeuePostgres). Everything after the open is the same code.
type lqSystem struct {
	q      *litequeue.Queue
	drop   func() error // removes the run's store after Close; nil: nothing to remove
	cancel context.CancelFunc
	done   chan error
}

const lqKind = "email"

// lqOptions is the Options every litequeue peer opens its Queue with: the
// defaults, with the retry workload's policy.
func lqOptions(cfg config) litequeue.Options {
	var opts litequeue.Options // on a file: WAL, synchronous=FULL
	if cfg.retry() {
		opts.Retry = litequeue.Policy{
			Backoff:  litequeue.Constant,
			Base:     retryDelay,
			Ceiling:  retryDelay,
			MaxTries: retryTries,
			Jitter:   litequeue.NoJitter,
		}
	}
	return opts
}

// newLQSystem registers the workload's handler on q. drop, if not nil, runs
// after q's Close.
func newLQSystem(q *litequeue.Queue, drop func() error, t *tracker) *lqSystem {
	q.Handle(lqKind, litequeue.JSON(func(ctx context.Context, job *litequeue.Job, args jobArgs) error {
		return t.run(args)
	}))
	return &lqSystem{q: q, drop: drop}
}

// openLitequeue opens the Queue on the run's file.
func openLitequeue(ctx context.Context, cfg config, t *tracker) (system, error) {
	q, err := litequeue.Open(cfg.path, lqOptions(cfg))
	if err != nil {
		return nil, err
	}
	return newLQSystem(q, nil, t), nil
}

func (s *lqSystem) enqueue(ctx context.Context, seq int) error {
	_, err := s.q.Enqueue(ctx, lqKind, newArgs(seq))
	return err
}

func (s *lqSystem) enqueueBatch(ctx context.Context, seqs []int) error {
	payloads := make([]any, len(seqs))
	for i, seq := range seqs {
		payloads[i] = newArgs(seq)
	}
	_, err := s.q.EnqueueMany(ctx, lqKind, payloads)
	return err
}

func (s *lqSystem) start(ctx context.Context) error {
	wctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done = make(chan error, 1)
	go func() {
		s.done <- s.q.Work(wctx, litequeue.WorkerOptions{Concurrency: workers, ShutdownGrace: 10 * time.Second})
	}()
	return nil
}

func (s *lqSystem) stop() error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	return <-s.done
}

// unfinished counts the jobs in any state but completed, from Stats (a
// count per state, where List would read every waiting job of a growth run).
func (s *lqSystem) unfinished(ctx context.Context) (int, error) {
	st, err := s.q.Stats(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, q := range st.Queues {
		n += q.Due + q.Scheduled + q.Running + q.Dead + q.Discarded + q.Cancelled + q.Expired
	}
	return n, nil
}

func (s *lqSystem) stored(ctx context.Context) ([]int, error) {
	jobs, err := s.q.List(ctx, litequeue.Filter{State: litequeue.Pending})
	if err != nil {
		return nil, err
	}
	payloads := make([][]byte, len(jobs))
	for i, j := range jobs {
		payloads[i] = j.Payload
	}
	return seqsOf(payloads)
}

// close closes the Queue and removes the run's store, if there is one to
// remove.
func (s *lqSystem) close() error {
	err := s.q.Close()
	if s.drop != nil {
		err = errors.Join(err, s.drop())
	}
	return err
}
