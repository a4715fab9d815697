package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/gob"
	"encoding/json"
	"fmt"

	"maragu.dev/goqite"
	"maragu.dev/goqite/jobs"
)

// goqiteSchema is goqite v0.4.0's schema_sqlite.sql, which the module does
// not export.
const goqiteSchema = `
create table goqite (
  id text primary key default ('m_' || lower(hex(randomblob(16)))),
  created text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  updated text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  queue text not null,
  body blob not null,
  timeout text not null default (strftime('%Y-%m-%dT%H:%M:%fZ')),
  received integer not null default 0,
  priority integer not null default 0
) strict;

create trigger goqite_updated_timestamp after update on goqite begin
  update goqite set updated = strftime('%Y-%m-%dT%H:%M:%fZ') where id = old.id;
end;

create index goqite_queue_priority_created_idx on goqite (queue, priority desc, created);
`

// goqiteSystem drives goqite's jobs.Runner: a failed job stays in the
// table and is received again once its message timeout has passed, at
// most MaxReceive times in all.
type goqiteSystem struct {
	db     *sql.DB
	q      *goqite.Queue
	r      *jobs.Runner
	cancel context.CancelFunc
	done   chan struct{}
}

const goqiteJob = "email"

func openGoqite(ctx context.Context, cfg config, t *tracker) (system, error) {
	db, err := openSQLite(ctx, cfg.path)
	if err != nil {
		return nil, err
	}
	if !cfg.producer { // the pickup producer's store has the table already
		if _, err := db.ExecContext(ctx, goqiteSchema); err != nil {
			db.Close()
			return nil, fmt.Errorf("schema: %w", err)
		}
	}
	opts := goqite.NewOpts{DB: db, Name: "jobs"} // defaults: timeout 5s, 3 receives
	if cfg.retry() {
		// goqite's retry delay is the message timeout: a failed job is
		// received again once the timeout set at its receive has passed.
		opts.Timeout = retryDelay
		opts.MaxReceive = retryTries
	}
	s := &goqiteSystem{db: db, q: goqite.New(opts)}
	// Default poll interval (100ms), with the job limit at 16.
	s.r = jobs.NewRunner(jobs.NewRunnerOpts{Limit: workers, Queue: s.q})
	s.r.Register(goqiteJob, func(ctx context.Context, m []byte) error {
		var args jobArgs
		if err := json.Unmarshal(m, &args); err != nil {
			return err
		}
		return t.run(args)
	})
	return s, nil
}

func goqiteMessage(seq int) (goqite.Message, error) {
	body, err := json.Marshal(newArgs(seq))
	return goqite.Message{Body: body}, err
}

func (s *goqiteSystem) enqueue(ctx context.Context, seq int) error {
	m, err := goqiteMessage(seq)
	if err != nil {
		return err
	}
	_, err = jobs.Create(ctx, s.q, goqiteJob, m)
	return err
}

// enqueueBatch creates the jobs in one transaction with jobs.CreateTx.
func (s *goqiteSystem) enqueueBatch(ctx context.Context, seqs []int) error {
	return inTx(ctx, s.db, func(tx *sql.Tx) error {
		for _, seq := range seqs {
			m, err := goqiteMessage(seq)
			if err != nil {
				return err
			}
			if _, err := jobs.CreateTx(ctx, tx, s.q, goqiteJob, m); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *goqiteSystem) start(ctx context.Context) error {
	rctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.r.Start(rctx) // returns after the running jobs finished
	}()
	return nil
}

func (s *goqiteSystem) stop() error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	<-s.done
	return nil
}

// unfinished counts the messages left: the runner deletes a job's message
// once the job succeeded.
func (s *goqiteSystem) unfinished(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `select count(*) from goqite`).Scan(&n)
	return n, err
}

// stored decodes the messages' bodies: the runner's gob envelope (a job
// name and the message) around the JSON payload.
func (s *goqiteSystem) stored(ctx context.Context) ([]int, error) {
	bodies, err := queryBlobs(ctx, s.db, `select body from goqite where queue = 'jobs' and received = 0`)
	if err != nil {
		return nil, err
	}
	payloads := make([][]byte, len(bodies))
	for i, b := range bodies {
		var env struct {
			Name    string
			Message []byte
		}
		if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&env); err != nil {
			return nil, err
		}
		payloads[i] = env.Message
	}
	return seqsOf(payloads)
}

func (s *goqiteSystem) close() error { return s.db.Close() }
