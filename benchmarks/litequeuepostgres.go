package main

import (
	"context"
	"errors"

	"github.com/litequeue/litequeue/postgres"
)

// openLitequeuePostgres opens the Queue with postgres.Open on a fresh
// database of the -postgres server, dropped at close; from there on it is
// the litequeue peer's code (lqSystem), with the same Options, handler and
// calls. The Queue's pool is database/sql's default (no connection limit).
func openLitequeuePostgres(ctx context.Context, cfg config, t *tracker) (system, error) {
	dsn, drop, err := freshDatabase(ctx, cfg.postgres)
	if err != nil {
		return nil, err
	}
	q, err := postgres.Open(ctx, dsn, lqOptions(cfg))
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	return newLQSystem(q, drop, t), nil
}
