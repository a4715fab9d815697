package postgres_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// TestSchemaSQL: the SQL a migration tool applies makes the tables that
// Open makes, of SchemaVersion, with a database ID; Version reads 0
// before and the version after, and refuses tables newer than the
// binary's.
func TestSchemaSQL(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	ctx := t.Context()
	if v, err := postgres.Version(ctx, dsn); v != 0 || err != nil {
		t.Fatalf("Version of an empty database = %d, %v; want 0", v, err)
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for range 2 { // every statement can run again
		if _, err := admin.ExecContext(ctx, postgres.SchemaSQL()); err != nil {
			t.Fatalf("apply SchemaSQL: %v", err)
		}
	}
	if v, err := postgres.Version(ctx, dsn); v != postgres.SchemaVersion || err != nil {
		t.Fatalf("Version after SchemaSQL = %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
	var id string
	if err := admin.QueryRowContext(ctx, `SELECT value FROM litequeue_meta WHERE name = 'database_id'`).Scan(&id); err != nil || id == "" {
		t.Errorf("database ID after SchemaSQL = %q, %v", id, err)
	}
	checkUpgraded(t, dsn, 0) // the tables and indexes of Open's, at its version

	if _, err := admin.ExecContext(ctx, `UPDATE litequeue_meta SET value = '99' WHERE name = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Version(ctx, dsn); err == nil || !strings.Contains(err.Error(), "99") {
		t.Errorf("Version of tables of version 99 = %v, want an error naming it", err)
	}
}
