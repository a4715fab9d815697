package store

import "context"

// The policies recorded on a database: a row of litequeue_policies per
// scope — the default retry policy, each named policy, each kind handled
// — with its resolved value as JSON, which the dashboard and the
// litequeue command read to show what the workers use.

const (
	// recordPolicySQL writes a scope's value, and who recorded it when,
	// only where the value changed: a worker that starts again with the
	// same options leaves the row, its time and its author as they were.
	recordPolicySQL = `INSERT INTO litequeue_policies (scope, name, value, recorded_at, host, pid)
	VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value,
		recorded_at = excluded.recorded_at, host = excluded.host, pid = excluded.pid
	WHERE litequeue_policies.value <> excluded.value`
	policiesSQL = `SELECT scope, name, value, recorded_at, host, pid FROM litequeue_policies ORDER BY scope, name`
)

// A PolicyRow is a row of litequeue_policies: the value of one scope
// ("default", "policy" or "kind", and its name) as JSON, recorded at
// RecordedAt (ms) by the process PID on Host.
type PolicyRow struct {
	Scope      string `db:"scope"`
	Name       string `db:"name"`
	Value      string `db:"value"`
	RecordedAt int64  `db:"recorded_at"`
	Host       string `db:"host"`
	PID        int    `db:"pid"`
}

// RecordPolicies records rows in tx, each where its scope has no row or
// one of another value; it returns how many it wrote. Rows of other
// scopes are left as they are.
func RecordPolicies(ctx context.Context, tx Execer, rows []PolicyRow) (int, error) {
	n := 0
	for _, r := range rows {
		changed, err := wrote(tx.ExecContext(ctx, recordPolicySQL, r.Scope, r.Name, r.Value, r.RecordedAt, r.Host, r.PID))
		if err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}

// Policies reads the recorded policies, by scope and name.
func Policies(ctx context.Context, ex Execer) ([]PolicyRow, error) {
	return selectAll[PolicyRow](ctx, ex, policiesSQL)
}
