package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// migrateJSON is the JSON of "migrate".
type migrateJSON struct {
	Database      string `json:"database"`
	VersionBefore int    `json:"version_before"`
	Version       int    `json:"version"`
}

// TestMigrate makes litequeue's tables in a new database, says so, finds
// them done the second time, and prints the SQL of each backend.
func TestMigrate(t *testing.T) {
	t.Parallel()
	for name, db := range map[string]func(testing.TB) string{
		"file":   func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "new.db") },
		"server": pgtest.DSN,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := db(t)
			run := on(t, db)
			if r := runCLI(t, testCLIOn(db), "stats"); r.code == exitOK {
				t.Fatalf("stats before migrate: exit 0, want a refusal")
			}
			first := decode[migrateJSON](t, run("migrate", "--json"))
			if first.VersionBefore != 0 || first.Version == 0 || first.Database != redact(db) {
				t.Errorf("first migrate = %+v, want from 0 to a version, on %s", first, redact(db))
			}
			if r := run("migrate"); !strings.Contains(r.stdout, "already: nothing to do") {
				t.Errorf("second migrate said %q", r.stdout)
			}
			again := decode[migrateJSON](t, run("migrate", "--json"))
			if again.VersionBefore != first.Version || again.Version != first.Version {
				t.Errorf("second migrate = %+v, want %d before and after", again, first.Version)
			}
			run("stats") // the tables are there

			want := litequeue.SchemaSQL()
			if name == "server" {
				want = postgres.SchemaSQL()
				if first.Version != postgres.SchemaVersion {
					t.Errorf("migrate made version %d on the server, want %d", first.Version, postgres.SchemaVersion)
				}
			}
			if got := run("migrate", "--print").stdout; got != want {
				t.Errorf("migrate --print wrote %d bytes, not the %d of the schema", len(got), len(want))
			}
		})
	}
}

// TestMigrate_PrintChangesNothing: --print touches no database, not even
// one that does not exist.
func TestMigrate_PrintChangesNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "none.db")
	if r := on(t, path)("migrate", "--print"); !strings.Contains(r.stdout, "CREATE TABLE") {
		t.Errorf("migrate --print wrote %q", r.stdout)
	}
	if r := runCLI(t, testCLIOn(path), "stats"); r.code == exitOK || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("after migrate --print, stats: exit %d, %q; want no file", r.code, r.stderr)
	}
}

// testCLIOn is a test cli on db.
func testCLIOn(db string) *cli {
	c := testCLI("")
	c.db = db
	return c
}
