package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// SchemaVersion is the version of litequeue's tables that Open makes.
const SchemaVersion = pgSchemaVersion

// SchemaSQL returns the SQL that makes litequeue's tables as Open does, for
// an app's own migration tool: schema.sql, then the statements that record
// its version and give the database its ID (pgRecordVersion), so that
// Open finds the tables done. Every statement can run again.
func SchemaSQL() string {
	return pgSchemaSQL + fmt.Sprintf(`
-- What Open records once it has made the tables: their version, and the
-- database's random ID (by which Copy knows it as a source).
INSERT INTO litequeue_meta (name, value) VALUES ('schema_version', '%d')
	ON CONFLICT (name) DO UPDATE SET value = excluded.value;
INSERT INTO litequeue_meta (name, value) VALUES ('database_id', md5(random()::text || clock_timestamp()::text))
	ON CONFLICT (name) DO NOTHING;
`, pgSchemaVersion)
}

// TablesVersion reads the version of litequeue's tables in the schema of
// db's search_path, 0 for none, and changes nothing. Tables newer than
// this binary's are an error.
func TablesVersion(ctx context.Context, db *sql.DB) (int, error) {
	conn, err := sqlx.NewDb(db, "pgx").Connx(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return pgCheckVersion(ctx, conn, false)
}
