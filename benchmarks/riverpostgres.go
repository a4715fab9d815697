package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// riverPostgresSystem drives a River client on its pgx driver, on a fresh
// database of the -postgres server: the same worker, settings and calls as
// the riversqlite peer of the same fetch settings.
type riverPostgresSystem struct {
	riverClient[pgx.Tx]
	pool *pgxpool.Pool
	drop func() error
}

// riverPoolConns is the pool's size: one connection per worker or producer
// goroutine (pgxpool's default, 4 on a 2-core machine, would make 16
// producers queue for a connection).
const riverPoolConns = workers

// riverPostgresPeer is River on PostgreSQL, fetching as fetch says.
func riverPostgresPeer(fetch riverFetch) peerSpec {
	return peerSpec{
		open:     openRiverPostgres(fetch),
		settings: fmt.Sprintf("riverpgxv5, a pgxpool of %d connections; %s", riverPoolConns, fetch),
	}
}

// openRiverPostgres returns the opener of a River peer on PostgreSQL that
// fetches as fetch says.
func openRiverPostgres(fetch riverFetch) opener {
	return func(ctx context.Context, cfg config, t *tracker) (system, error) {
		dsn, drop, err := freshDatabase(ctx, cfg.postgres)
		if err != nil {
			return nil, err
		}
		s := &riverPostgresSystem{drop: drop}
		if err := s.open(ctx, dsn, fetch, cfg, t); err != nil {
			return nil, errors.Join(err, s.close())
		}
		return s, nil
	}
}

func (s *riverPostgresSystem) open(ctx context.Context, dsn string, fetch riverFetch, cfg config, t *tracker) error {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("PostgreSQL DSN: %w", err)
	}
	pcfg.MaxConns = riverPoolConns
	if s.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return err
	}
	s.riverClient, err = newRiverClient(ctx, riverpgxv5.New(s.pool), fetch, cfg, t)
	return err
}

func (s *riverPostgresSystem) unfinished(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE state <> 'completed'`).Scan(&n)
	return n, err
}

// stored reads the args of the available jobs (jsonb, read as its text).
func (s *riverPostgresSystem) stored(ctx context.Context) ([]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT args::text FROM river_job WHERE state = 'available'`)
	if err != nil {
		return nil, err
	}
	args, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	return seqsOf(args)
}

// close closes the pool and drops the run's database.
func (s *riverPostgresSystem) close() error {
	if s.pool != nil {
		s.pool.Close()
	}
	return s.drop()
}
