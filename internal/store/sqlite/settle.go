package sqlite

import (
	"context"

	"github.com/litequeue/litequeue/internal/store"
)

// SetHeldRows writes each row with a statement of its own: on the file,
// one UPDATE … FROM (VALUES …) for a chunk of rows costs more per row
// than a prepared UPDATE per row (see BenchmarkSettle).
func (e *Engine) SetHeldRows(ctx context.Context, tx store.Execer, rows []store.HeldRow) ([]bool, error) {
	return store.SetHeldRowEach(ctx, tx, rows)
}

// AddHistory adds the rows in chunks of one INSERT each (store.AddHistory).
func (e *Engine) AddHistory(ctx context.Context, tx store.Execer, rows []*store.HistoryRow) error {
	return store.AddHistory(ctx, tx, rows)
}
