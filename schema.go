package litequeue

// SchemaSQL returns the SQL of litequeue's tables in a SQLite file
// (schema.sql), of the version [Open] makes, to read or to review: [Open]
// makes and upgrades a file's tables itself, and also sets the file's
// application_id and records the version, which this SQL does not. The
// tables on a PostgreSQL server have SQL of their own: package postgres's
// SchemaSQL.
func SchemaSQL() string { return schemaSQL }
