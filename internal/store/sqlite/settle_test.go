package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// BenchmarkSettle measures, on the file, the fenced writes of a writer
// batch of 64 run ends (running jobs completed), in one transaction:
// "row" is the engine's SetHeldRows, a prepared UPDATE per row; "values8"
// … "values64" one UPDATE … FROM (VALUES …) per chunk (a WITH: SQLite
// names no columns of a VALUES in FROM) of that many rows,
// with RETURNING to tell which fences held. Each transaction first puts
// the 64 jobs back to running: "reset" is that alone, to subtract. At
// synchronous=NORMAL, so that no fsync hides the statements' cost.
func BenchmarkSettle(b *testing.B) {
	const batch = 64
	for _, name := range []string{"reset", "row", "values8", "values16", "values64"} {
		b.Run(name, func(b *testing.B) {
			e := openTemp(b, Config{Synchronous: "normal"})
			f := storetest.NewFixture(b, e)
			ctx := context.Background()
			rows := settleRows(b, f, batch)
			var chunk int
			fmt.Sscanf(name, "values%d", &chunk)
			b.ResetTimer()
			for range b.N {
				err := f.Write(ctx, func(tx store.Execer) error {
					if _, err := tx.ExecContext(ctx, `UPDATE litequeue_jobs SET state = 'running', finished_at = NULL,
						lease_until = 5000, cancel = 0`); err != nil {
						return err
					}
					switch {
					case name == "row":
						_, err := e.SetHeldRows(ctx, tx, rows)
						return err
					case chunk > 0:
						return setHeldValues(ctx, tx, rows, chunk)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// settleRows inserts n running jobs, and returns the ends that complete
// them.
func settleRows(b *testing.B, f *storetest.Fixture, n int) []store.HeldRow {
	ctx := context.Background()
	var ids []int64
	err := f.Write(ctx, func(tx store.Execer) (err error) {
		ids, err = f.Engine.InsertJobs(ctx, tx, &store.NewJobs{Queue: "q", Kind: "k", Payloads: make([][]byte, n), MaxTries: 3})
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE litequeue_jobs SET state = 'running', token = 7, lease_until = 5000`)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]store.HeldRow, n)
	for i, id := range ids {
		claimed, err := store.JobByID(ctx, f.Reads, f.Engine.Info().JobColumns, id)
		if err != nil {
			b.Fatal(err)
		}
		after := *claimed
		after.State, after.RunAt.Valid, after.FinishedAt = "completed", false, store.NullMS(store.FromMS(3000))
		rows[i] = store.HeldRow{Claimed: claimed, After: &after}
	}
	return rows
}

// setHeldValues is the fenced write of rows in one UPDATE … FROM a
// WITH of VALUES per chunk, the alternative BenchmarkSettle weighs.
func setHeldValues(ctx context.Context, tx store.Execer, rows []store.HeldRow, chunk int) error {
	query := `WITH v(id, token, created_at, state, attempt, run_at, finished_at, last_error) AS (VALUES ` +
		strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?), `, chunk), ", ") + `)
		UPDATE litequeue_jobs AS j
		SET state = v.state, attempt = v.attempt, run_at = v.run_at, finished_at = v.finished_at,
		    last_error = v.last_error, lease_until = 0, cancel = 0
		FROM v WHERE j.id = v.id AND j.token = v.token AND j.created_at = v.created_at AND j.state = 'running' AND j.cancel = 0
		RETURNING id`
	args := make([]any, 0, 8*chunk)
	for len(rows) > 0 {
		args = args[:0]
		for _, r := range rows[:chunk] {
			a := r.After
			args = append(args, a.ID, r.Claimed.Token, r.Claimed.CreatedAt, a.State, a.Attempt, a.RunAt, a.FinishedAt, a.LastError)
		}
		var held []int64
		if err := tx.SelectContext(ctx, &held, query, args...); err != nil {
			return err
		}
		if len(held) != chunk {
			return fmt.Errorf("%d of %d fences held", len(held), chunk)
		}
		rows = rows[chunk:]
	}
	return nil
}
