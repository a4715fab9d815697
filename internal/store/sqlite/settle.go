package sqlite

import (
	"context"

	"github.com/litequeue/litequeue/internal/store"
)

// SetHeldRows writes each row with a prepared statement of its own: on
// the file, one UPDATE … FROM (VALUES …) per chunk of 8, 16 or 64 rows
// was no faster for a batch of 64 (BenchmarkSettle: each within the
// other's noise, 1.2–2.3 ms against 1.5–1.8 ms), and a statement of its
// own per chunk size. The history rows of the rows written follow, in
// chunks (store.AddHistory).
func (e *Engine) SetHeldRows(ctx context.Context, tx store.Execer, rows []store.HeldRow) ([]bool, error) {
	return store.SetHeldRowEach(ctx, tx, rows)
}

// AddHistory adds the rows in chunks of one INSERT each (store.AddHistory).
func (e *Engine) AddHistory(ctx context.Context, tx store.Execer, rows []*store.HistoryRow) error {
	return store.AddHistory(ctx, tx, rows)
}
