package postgres

import (
	"context"
	"database/sql"
	"fmt"

	pgstore "github.com/litequeue/litequeue/internal/store/postgres"
)

// SchemaVersion is the version of litequeue's tables that [Open] makes, or
// upgrades older ones to.
const SchemaVersion = pgstore.SchemaVersion

// SchemaSQL returns the SQL that makes litequeue's tables of
// [SchemaVersion] in the schema of the connection's search_path, as
// [Open] makes them, for a team that applies every change to its database
// with its own migration tool: [Open] then finds them made and changes
// nothing. It records the version and gives the database the random ID by
// which [litequeue.Copy] knows it. Every statement can run again. It
// makes new tables; tables of an older version are upgraded by [Open],
// whose steps build their indexes concurrently.
func SchemaSQL() string { return pgstore.SchemaSQL() }

// Version connects to the server at dsn, as [Open] does, and returns the
// version of litequeue's tables there, 0 for none, changing nothing.
// Tables newer than [SchemaVersion] are an error.
func Version(ctx context.Context, dsn string) (int, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return 0, fmt.Errorf("litequeue: postgres version: %w", err)
	}
	defer db.Close()
	v, err := pgstore.TablesVersion(ctx, db)
	if err != nil {
		return 0, fmt.Errorf("litequeue: postgres version: %w", err)
	}
	return v, nil
}
