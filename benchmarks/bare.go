package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// bareSystem is the limit column: the same driver, file settings and
// payloads, with loops written straight against database/sql and none of
// a queue's bookkeeping beyond a state column and one history row per run.
//
//   - enqueue: one INSERT per committed transaction;
//   - enqueue16: group commit, one committer goroutine batching up to 512
//     inserts per transaction, each producer returning after its commit;
//   - batch: 1,000 INSERTs in one transaction;
//   - drain: one claimer (256 jobs per UPDATE … RETURNING), 16 handler
//     goroutines, one committer writing completions and one history row
//     each, up to 512 runs per transaction.
type bareSystem struct {
	db *sql.DB
	t  *tracker

	inserts chan insertReq // enqueue16: to the group committer
	stopIns chan struct{}
	insDone chan struct{}

	cancel  context.CancelFunc
	drained sync.WaitGroup
	err     error // of the drain loops, set before drained is done
	errMu   sync.Mutex
}

const bareSchema = `
CREATE TABLE jobs (
	id          INTEGER PRIMARY KEY,
	kind        TEXT    NOT NULL,
	payload     BLOB    NOT NULL,
	state       TEXT    NOT NULL DEFAULT 'pending',
	attempt     INTEGER NOT NULL DEFAULT 0,
	run_at      INTEGER NOT NULL,
	finished_at INTEGER
);
CREATE INDEX jobs_claim ON jobs (run_at, id) WHERE state = 'pending';
CREATE TABLE history (
	id          INTEGER PRIMARY KEY,
	job_id      INTEGER NOT NULL,
	attempt     INTEGER NOT NULL,
	started_at  INTEGER NOT NULL,
	finished_at INTEGER NOT NULL,
	outcome     TEXT    NOT NULL
);
`

const (
	bareInsertSQL   = `INSERT INTO jobs (kind, payload, run_at) VALUES (?, ?, ?)`
	bareClaimSQL    = `UPDATE jobs SET state = 'running', attempt = attempt + 1 WHERE id IN (SELECT id FROM jobs WHERE state = 'pending' AND run_at <= ? ORDER BY run_at, id LIMIT 256) RETURNING id, payload, attempt`
	bareCompleteSQL = `UPDATE jobs SET state = ?, finished_at = ? WHERE id = ?`
	bareHistorySQL  = `INSERT INTO history (job_id, attempt, started_at, finished_at, outcome) VALUES (?, ?, ?, ?, ?)`
	bareGroupMax    = 512
)

func openBare(ctx context.Context, cfg config, t *tracker) (system, error) {
	switch cfg.workload {
	case "retry", "latency", "idle", "drain100k":
		return nil, fmt.Errorf("%w: the bare loops cover enqueue, enqueue16, batch and drain", errUnsupported)
	}
	db, err := openSQLite(ctx, cfg.path)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, bareSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("schema: %w", err)
	}
	s := &bareSystem{db: db, t: t}
	if cfg.workload == "enqueue16" {
		s.inserts = make(chan insertReq, bareGroupMax)
		s.stopIns = make(chan struct{})
		s.insDone = make(chan struct{})
		go s.groupCommitter()
	}
	return s, nil
}

func barePayload(seq int) ([]byte, error) { return json.Marshal(newArgs(seq)) }

func (s *bareSystem) enqueue(ctx context.Context, seq int) error {
	p, err := barePayload(seq)
	if err != nil {
		return err
	}
	if s.inserts != nil {
		req := insertReq{payload: p, done: make(chan error, 1)}
		s.inserts <- req
		return <-req.done
	}
	return inTx(ctx, s.db, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, bareInsertSQL, "email", p, time.Now().UnixMilli())
		return err
	})
}

type insertReq struct {
	payload []byte
	done    chan error
}

// groupCommitter commits the inserts that queued up together, up to 512
// per transaction, and answers each after the commit.
func (s *bareSystem) groupCommitter() {
	defer close(s.insDone)
	batch := make([]insertReq, 0, bareGroupMax)
	for {
		select {
		case r := <-s.inserts:
			batch = append(batch[:0], r)
		case <-s.stopIns:
			return
		}
	more:
		for len(batch) < bareGroupMax {
			select {
			case r := <-s.inserts:
				batch = append(batch, r)
			default:
				break more
			}
		}
		err := s.insertAll(context.Background(), len(batch), func(i int) []byte { return batch[i].payload })
		for _, r := range batch {
			r.done <- err
		}
	}
}

// insertAll inserts n payloads in one transaction with one prepared statement.
func (s *bareSystem) insertAll(ctx context.Context, n int, payload func(i int) []byte) error {
	now := time.Now().UnixMilli()
	return inTx(ctx, s.db, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, bareInsertSQL)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := range n {
			if _, err := stmt.ExecContext(ctx, "email", payload(i), now); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *bareSystem) enqueueBatch(ctx context.Context, seqs []int) error {
	payloads := make([][]byte, len(seqs))
	for i, seq := range seqs {
		p, err := barePayload(seq)
		if err != nil {
			return err
		}
		payloads[i] = p
	}
	return s.insertAll(ctx, len(payloads), func(i int) []byte { return payloads[i] })
}

// bareJob is a claimed job; bareRun is its outcome, waiting to be committed.
type (
	bareJob struct {
		id, attempt int64
		payload     []byte
	}
	bareRun struct {
		id, attempt       int64
		started, finished int64
		outcome           string
	}
)

func (s *bareSystem) start(ctx context.Context) error {
	dctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	work := make(chan bareJob, 256)
	runs := make(chan bareRun, bareGroupMax)
	var handlers sync.WaitGroup
	s.drained.Add(2)
	go func() { // claimer
		defer s.drained.Done()
		defer close(work)
		s.fail(s.claimLoop(dctx, work))
	}()
	for range workers {
		handlers.Go(func() {
			for j := range work {
				runs <- s.handle(j)
			}
		})
	}
	go func() {
		handlers.Wait()
		close(runs)
	}()
	go func() { // completer
		defer s.drained.Done()
		s.fail(s.completeLoop(runs))
	}()
	return nil
}

func (s *bareSystem) fail(err error) {
	if err != nil {
		s.errMu.Lock()
		s.err = err
		s.errMu.Unlock()
	}
}

// claimLoop claims due jobs 256 at a time until ctx is done, looking again
// 5ms after a claim that found none.
func (s *bareSystem) claimLoop(ctx context.Context, work chan<- bareJob) error {
	for ctx.Err() == nil {
		var jobs []bareJob
		err := inTx(ctx, s.db, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, bareClaimSQL, time.Now().UnixMilli())
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var j bareJob
				if err := rows.Scan(&j.id, &j.payload, &j.attempt); err != nil {
					return err
				}
				jobs = append(jobs, j)
			}
			return rows.Err()
		})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		if len(jobs) == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		for _, j := range jobs {
			work <- j
		}
	}
	return nil
}

func (s *bareSystem) handle(j bareJob) bareRun {
	r := bareRun{id: j.id, attempt: j.attempt, started: time.Now().UnixMilli(), outcome: "completed"}
	var args jobArgs
	err := json.Unmarshal(j.payload, &args)
	if err == nil {
		err = s.t.run(args)
	}
	if err != nil {
		r.outcome = "failed"
	}
	r.finished = time.Now().UnixMilli()
	return r
}

// completeLoop commits the runs' outcomes, up to 512 per transaction,
// until runs is closed.
func (s *bareSystem) completeLoop(runs <-chan bareRun) error {
	ctx := context.Background()
	batch := make([]bareRun, 0, bareGroupMax)
	for r := range runs {
		batch = append(batch[:0], r)
	more:
		for len(batch) < bareGroupMax {
			select {
			case r, ok := <-runs:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		err := inTx(ctx, s.db, func(tx *sql.Tx) error {
			complete, err := tx.PrepareContext(ctx, bareCompleteSQL)
			if err != nil {
				return err
			}
			defer complete.Close()
			history, err := tx.PrepareContext(ctx, bareHistorySQL)
			if err != nil {
				return err
			}
			defer history.Close()
			for _, r := range batch {
				if _, err := complete.ExecContext(ctx, r.outcome, r.finished, r.id); err != nil {
					return err
				}
				if _, err := history.ExecContext(ctx, r.id, r.attempt, r.started, r.finished, r.outcome); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("complete: %w", err)
		}
	}
	return nil
}

func (s *bareSystem) stop() error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	s.drained.Wait()
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

func (s *bareSystem) unfinished(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE state <> 'completed'`).Scan(&n)
	return n, err
}

func (s *bareSystem) stored(ctx context.Context) ([]int, error) {
	payloads, err := queryBlobs(ctx, s.db, `SELECT payload FROM jobs WHERE state = 'pending'`)
	if err != nil {
		return nil, err
	}
	return seqsOf(payloads)
}

func (s *bareSystem) close() error {
	if s.stopIns != nil {
		close(s.stopIns)
		<-s.insDone
	}
	return s.db.Close()
}
