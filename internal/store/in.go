package store

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// selectIn runs a query whose (?) lists take slices, on the pool or in a
// transaction.
func selectIn(ctx context.Context, db Execer, dest any, query string, args ...any) error {
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return err
	}
	return db.SelectContext(ctx, dest, query, args...)
}

// execIn runs a statement whose (?) lists take slices.
func execIn(ctx context.Context, db Execer, query string, args ...any) error {
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, query, args...)
	return err
}
