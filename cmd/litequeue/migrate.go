package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

// migrate defines the flags of "migrate" and returns the command: it
// makes or upgrades litequeue's tables in the database, as the app's Open
// would, and says the version before and after; with --print it writes
// their SQL instead, for a team's own migration tool, and touches
// nothing.
func (c *cli) migrate(fs *flagSet) runFunc {
	printSQL := fs.Bool("print", false, "write the SQL of the tables, for a migration tool, and change nothing")
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		db := c.dbPath()
		if *printSQL {
			return c.printSchema(isServerURL(db), *asJSON)
		}
		before, err := c.schemaVersion(ctx, db)
		if err != nil {
			return err
		}
		q, err := c.openCreate(ctx, db)
		if err != nil {
			return err
		}
		defer q.Close()
		h, err := q.Health(ctx)
		if err != nil {
			return err
		}
		rep := c.report(*asJSON)
		rep.set("database", c.dbName(), "version_before", before, "version", h.SchemaVersion)
		switch {
		case before == 0:
			rep.say("made litequeue's tables in %s: version %d", c.dbName(), h.SchemaVersion)
		case before < h.SchemaVersion:
			rep.say("upgraded litequeue's tables in %s from version %d to %d", c.dbName(), before, h.SchemaVersion)
		default:
			rep.say("litequeue's tables in %s are at version %d already: nothing to do", c.dbName(), h.SchemaVersion)
		}
		return rep.end(nil)
	}
}

// schemaVersion reads the version of litequeue's tables in db, 0 for
// none (or no file), changing nothing.
func (c *cli) schemaVersion(ctx context.Context, db string) (int, error) {
	if isServerURL(db) {
		return postgres.Version(ctx, db)
	}
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	q, err := litequeue.OpenReadOnly(db, litequeue.Options{})
	if errors.Is(err, litequeue.ErrNoTables) {
		return 0, nil
	}
	if err != nil {
		return 0, openError(db, err)
	}
	defer q.Close()
	h, err := q.Health(ctx)
	if err != nil {
		return 0, err
	}
	return h.SchemaVersion, nil
}

// printSchema writes the SQL of litequeue's tables on a server, or in a
// file.
func (c *cli) printSchema(server, asJSON bool) error {
	sql, version := litequeue.SchemaSQL(), 0
	if server {
		sql, version = postgres.SchemaSQL(), postgres.SchemaVersion
	}
	if asJSON {
		out := map[string]any{"sql": sql}
		if server {
			out["version"] = version
		}
		return writeJSON(c.stdout, out)
	}
	_, err := fmt.Fprint(c.stdout, sql)
	return err
}
