package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
)

// The workers at work on a database: a row of litequeue_workers per Work
// loop, which the loop writes when it starts and at each heartbeat, and
// deletes when it returns. How often it beats, and when a row is silent
// or forgotten, is the root's to decide.

// Names is the stored form of a list of names (a Work loop's queues, its
// kinds): a JSON array, [] for none.
type Names []string

// Value implements driver.Valuer.
func (n Names) Value() (driver.Value, error) {
	if len(n) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal([]string(n))
	return string(b), err
}

// Scan implements sql.Scanner. A column that is not a JSON array of
// strings fails the read that scans it, with the error.
func (n *Names) Scan(src any) error {
	var decoded []string
	if err := scanJSON(src, &decoded, "names", "a JSON array"); err != nil {
		return err
	}
	if len(decoded) == 0 {
		decoded = nil
	}
	*n = decoded
	return nil
}

// A WorkerRow is a row of litequeue_workers: one Work loop, as it last
// recorded itself. Times are Unix milliseconds.
type WorkerRow struct {
	ID          string `db:"id"`
	Name        string `db:"name"`
	Host        string `db:"host"`
	PID         int    `db:"pid"`
	Queues      Names  `db:"queues"` // none: every queue
	Kinds       Names  `db:"kinds"`
	Concurrency int    `db:"concurrency"`
	Running     int    `db:"running"`
	Started     int64  `db:"started"`
	LastSeen    int64  `db:"last_seen"`
}

const (
	// A loop writes its own row only: the row as it is now replaces the
	// one it wrote last, whatever its last_seen (its clock may have gone
	// back), and comes back if the janitor deleted it meanwhile.
	recordWorkerSQL = `INSERT INTO litequeue_workers
	(id, name, host, pid, queues, kinds, concurrency, running, started, last_seen)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET kinds = excluded.kinds, running = excluded.running, last_seen = excluded.last_seen`
	deleteWorkerSQL = `DELETE FROM litequeue_workers WHERE id = ?`
	workersSQL      = `SELECT id, name, host, pid, queues, kinds, concurrency, running, started, last_seen
	FROM litequeue_workers ORDER BY started, id`
)

// RecordWorker writes w's row in tx: a new row, or, for a loop recorded
// already, its kinds, running and last_seen.
func RecordWorker(ctx context.Context, tx Execer, w *WorkerRow) error {
	_, err := tx.ExecContext(ctx, recordWorkerSQL, w.ID, w.Name, w.Host, w.PID, w.Queues, w.Kinds,
		w.Concurrency, w.Running, w.Started, w.LastSeen)
	return err
}

// DeleteWorker deletes in tx the row of the loop id, if there is one.
func DeleteWorker(ctx context.Context, tx Execer, id string) error {
	_, err := tx.ExecContext(ctx, deleteWorkerSQL, id)
	return err
}

// Workers reads every worker's row, those started first first.
func Workers(ctx context.Context, ex Execer) ([]WorkerRow, error) {
	return selectAll[WorkerRow](ctx, ex, workersSQL)
}

const (
	silentWorkersSQL       = `SELECT id FROM litequeue_workers WHERE last_seen < ?`
	deleteSilentWorkersSQL = `DELETE FROM litequeue_workers WHERE id IN (?) AND last_seen < ?`
)

// SilentWorkers returns the IDs of the workers last seen before cutoff.
// It takes no lock: the janitor writes only when it finds some.
func SilentWorkers(ctx context.Context, ex Execer, cutoff int64) ([]string, error) {
	return selectAll[string](ctx, ex, silentWorkersSQL, cutoff)
}

// DeleteSilentWorkers deletes in tx those of the workers ids still last
// seen before cutoff (one may have beaten since it was found).
func DeleteSilentWorkers(ctx context.Context, tx Execer, ids []string, cutoff int64) error {
	return execIn(ctx, tx, deleteSilentWorkersSQL, ids, cutoff)
}
