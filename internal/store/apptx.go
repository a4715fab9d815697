package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// beginTries is how many times AppTx begins its transaction while the
// database reports itself busy, each try waiting up to SQLite's busy
// timeout.
const beginTries = 3

// AppTx runs fn in a write transaction on db, the app's pool, in its turn
// among the writer's commits: it takes the writer's turn in the process,
// then the engine's lock that orders writers across processes, and only
// then begins, trying again while the database is busy. It commits if fn
// returns nil; if fn returns an error, it rolls back and returns that
// error unchanged (its own errors say which step failed).
func (w *Writer[N]) AppTx(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	if err := w.Turn.Take(ctx); err != nil {
		return err
	}
	defer w.Turn.Give()
	if err := w.Engine.Lock(); err != nil {
		return fmt.Errorf("take write lock: %w", err)
	}
	defer w.Engine.Unlock()
	tx, err := w.beginApp(ctx, db)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	w.Turn.AppBegan()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// beginApp begins a write transaction on db, trying again while the
// database is busy, up to beginTries times.
func (w *Writer[N]) beginApp(ctx context.Context, db *sqlx.DB) (*sqlx.Tx, error) {
	for try := 1; ; try++ {
		tx, err := db.BeginTxx(ctx, nil) // IMMEDIATE on a file: see its dsn
		if err == nil || !w.Engine.Retry(err) || try == beginTries {
			return tx, err
		}
	}
}
