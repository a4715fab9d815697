package postgres_test

import (
	"fmt"
	"strings"

	"github.com/litequeue/litequeue/postgres"
)

// SchemaSQL is what a team applies with its own migration tool before
// deploying, so that the app's Open finds litequeue's tables made: the
// command "litequeue migrate --print --db postgres://…" writes it.
func ExampleSchemaSQL() {
	sql := postgres.SchemaSQL()
	fmt.Println(strings.Contains(sql, "CREATE TABLE IF NOT EXISTS litequeue_jobs"))
	fmt.Println(strings.Contains(sql, fmt.Sprintf("'schema_version', '%d'", postgres.SchemaVersion)))
	// Output:
	// true
	// true
}
