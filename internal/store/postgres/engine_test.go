package postgres_test

import (
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/internal/store"
	"github.com/litequeue/litequeue/internal/store/postgres"
	"github.com/litequeue/litequeue/internal/store/storetest"
)

// TestEngine_Suite runs the suite every engine passes, each case on a
// database of its own on the test server.
func TestEngine_Suite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) *storetest.Fixture {
		return storetest.NewFixture(t, openEngine(t))
	})
}

// openEngine opens an engine on a database of its own on the test
// server, and closes it when the test ends.
func openEngine(t *testing.T) *postgres.Engine {
	t.Helper()
	return storetest.OpenServer(t, pgtest.DSN(t))
}

// TestEngine_Backup: a server has no file to copy, and Backup says so,
// with what to use instead.
func TestEngine_Backup(t *testing.T) {
	t.Parallel()
	err := openEngine(t).Backup(t.Context(), filepath.Join(t.TempDir(), "copy.db"), true)
	want := "a Queue on a server has no file to copy: back the server up with its own tools (pg_dump)"
	if err == nil || err.Error() != want {
		t.Errorf("Backup: %v, want %q", err, want)
	}
}

// TestEngine_LockKey takes the locks of a kind and of the copies, and
// reads their shape from pg_locks: a kind's is two int4 halves; the
// copies' is the one bigint lock of hashtext(schema.litequeue.copy),
// which every release that copies into a server takes, so that copies
// of an older and a newer process take turns.
func TestEngine_LockKey(t *testing.T) {
	t.Parallel()
	eng := openEngine(t)
	db := eng.Info().App
	ctx := t.Context()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	in := store.WrapTx(tx, eng.Info().Dialect)
	if err := eng.LockKey(ctx, in, "copy", ""); err != nil {
		t.Fatal(err)
	}
	if err := eng.LockKey(ctx, in, "kind", "k"); err != nil {
		t.Fatal(err)
	}
	var copies, kinds int
	err = tx.QueryRowxContext(ctx, `SELECT
		count(*) FILTER (WHERE objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = hashtext(current_schema() || '.litequeue.copy')::bigint),
		count(*) FILTER (WHERE objsubid = 2 AND classid::bigint = (hashtext(current_schema() || '.litequeue.kind')::bigint & 4294967295)
			AND objid::bigint = (hashtext('k')::bigint & 4294967295))
		FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`).Scan(&copies, &kinds)
	if err != nil {
		t.Fatal(err)
	}
	if copies != 1 || kinds != 1 {
		t.Errorf("locks held: %d of the copies' bigint key, %d of the kind's two halves; want 1 and 1", copies, kinds)
	}
}
