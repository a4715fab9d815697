package pgtest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/litequeue/litequeue/internal/pgtest"
)

// open opens dsn and closes it when the test ends.
func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// database returns the name of the database db is connected to.
func database(t *testing.T, db *sql.DB) string {
	t.Helper()
	var name string
	if err := db.QueryRowContext(t.Context(), `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatalf("current_database: %v", err)
	}
	return name
}

// exists reports whether the server of db has a database of that name.
func exists(t *testing.T, db *sql.DB, name string) bool {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		t.Fatalf("look for database %s: %v", name, err)
	}
	return n == 1
}

// userTables counts the tables of db outside PostgreSQL's own schemas.
func userTables(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`).Scan(&n)
	if err != nil {
		t.Fatalf("count tables: %v", err)
	}
	return n
}

func TestDSN_Isolated(t *testing.T) {
	t.Parallel()
	a, b := open(t, pgtest.DSN(t)), open(t, pgtest.DSN(t))
	nameA, nameB := database(t, a), database(t, b)
	if nameA == nameB {
		t.Fatalf("both DSNs name database %s, want two databases", nameA)
	}
	for _, name := range []string{nameA, nameB} {
		if !strings.HasPrefix(name, "lq_") {
			t.Errorf("database %q, want a name starting lq_", name)
		}
	}
	if got := userTables(t, a); got != 0 {
		t.Fatalf("a fresh database holds %d tables, want 0", got)
	}

	if _, err := a.ExecContext(t.Context(), `CREATE TABLE jobs (id bigint PRIMARY KEY); INSERT INTO jobs VALUES (1)`); err != nil {
		t.Fatalf("create a table in %s: %v", nameA, err)
	}
	if got, want := userTables(t, a), 1; got != want {
		t.Errorf("%s holds %d tables, want %d", nameA, got, want)
	}
	if got := userTables(t, b); got != 0 {
		t.Errorf("%s holds %d tables after a table was created in %s, want 0", nameB, got, nameA)
	}
	// The same table name in the other database is another table.
	if _, err := b.ExecContext(t.Context(), `CREATE TABLE jobs (id bigint PRIMARY KEY)`); err != nil {
		t.Fatalf("create the same table in %s: %v", nameB, err)
	}
	var n int
	if err := b.QueryRowContext(t.Context(), `SELECT count(*) FROM jobs`).Scan(&n); err != nil {
		t.Fatalf("count rows in %s: %v", nameB, err)
	}
	if n != 0 {
		t.Errorf("%s's jobs holds %d rows, want 0 (the row went to %s)", nameB, n, nameA)
	}
}

// TestDSN_Parallel gets databases from parallel subtests at once: each is
// its own, and sees only the table it made.
func TestDSN_Parallel(t *testing.T) {
	t.Parallel()
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			db := open(t, pgtest.DSN(t))
			table := fmt.Sprintf("t%d", i)
			if _, err := db.ExecContext(t.Context(), `CREATE TABLE `+table+` (id int)`); err != nil {
				t.Fatalf("create table %s: %v", table, err)
			}
			var names []string
			rows, err := db.QueryContext(t.Context(), `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					t.Fatal(err)
				}
				names = append(names, name)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(names) != 1 || names[0] != table {
				t.Errorf("database %s holds tables %v, want [%s]", database(t, db), names, table)
			}
		})
	}
}

// TestDSN_CleanupDrops checks that the database of a finished subtest is
// gone, also when the subtest left a connection to it open.
func TestDSN_CleanupDrops(t *testing.T) {
	t.Parallel()
	admin := open(t, pgtest.DSN(t))
	var left, closed string // databases whose connections were left open, closed
	var leaked *sql.DB
	t.Run("sub", func(t *testing.T) {
		db, err := sql.Open("pgx", pgtest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		leaked = db // left open past the subtest on purpose
		left = database(t, db)
		closed = database(t, open(t, pgtest.DSN(t))) // closed by a cleanup before the drop
		for _, name := range []string{left, closed} {
			if !exists(t, admin, name) {
				t.Errorf("database %s is missing while its test runs", name)
			}
		}
	})
	if leaked == nil || left == "" || closed == "" {
		t.Fatal("the subtest did not get its databases")
	}
	defer leaked.Close()
	for _, name := range []string{left, closed} {
		if exists(t, admin, name) {
			t.Errorf("database %s is still there after its test ended", name)
		}
	}
	if err := leaked.PingContext(t.Context()); err == nil {
		t.Errorf("a connection to dropped database %s still answers", left)
	}
}

// The tests below run this test binary again with the environment a case
// needs: DSN skips or fails the test it is called from, so it is observed
// from outside.

const childEnv = "PGTEST_CHILD"

// TestChild calls DSN in a child process started by the tests below, and
// does nothing otherwise.
func TestChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		return
	}
	pgtest.DSN(t)
	t.Log("DSN returned")
}

// runChild runs TestChild with LITEQUEUE_TEST_POSTGRES set to server and CI
// set to ci, and returns its output and whether it passed.
func runChild(t *testing.T, server, ci string) (string, bool) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestChild$", "-test.v", "-test.count=1")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, pgtest.EnvVar+"=") && !strings.HasPrefix(kv, "CI=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, childEnv+"=1", pgtest.EnvVar+"="+server, "CI="+ci)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run %s: %v", os.Args[0], err)
	}
	return string(out), err == nil
}

func TestDSN_NoServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, ci   string
		wantPass   bool
		wantOutput string
	}{
		{"skips locally", "", true, "--- SKIP: TestChild"},
		{"skips when CI is not true", "false", true, "--- SKIP: TestChild"},
		{"fails under CI", "true", false, "--- FAIL: TestChild"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, passed := runChild(t, "", tc.ci)
			if passed != tc.wantPass {
				t.Errorf("child passed = %v, want %v; output:\n%s", passed, tc.wantPass, out)
			}
			for _, want := range []string{tc.wantOutput, pgtest.EnvVar + " is not set"} {
				if !strings.Contains(out, want) {
					t.Errorf("child output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "DSN returned") {
				t.Errorf("DSN returned without a server:\n%s", out)
			}
		})
	}
}

// TestDSN_UnreachableServer checks that a DSN that names no server fails
// the test rather than skipping it: the variable says the tests must run.
func TestDSN_UnreachableServer(t *testing.T) {
	t.Parallel()
	// Port 1 on loopback: nothing listens there, the connection is refused.
	out, passed := runChild(t, "postgres://nobody:secret@127.0.0.1:1/x?sslmode=disable&connect_timeout=5", "")
	if passed {
		t.Fatalf("child passed, want it failed; output:\n%s", out)
	}
	for _, want := range []string{"--- FAIL: TestChild", "create database lq_", pgtest.EnvVar} {
		if !strings.Contains(out, want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("child output shows the DSN's password:\n%s", out)
	}
}

// TestServer_RestartAndStop restarts a server of the test's own: a
// connection of the pool is cut, the next one answers on the same DSN;
// once stopped, nothing answers.
func TestServer_RestartAndStop(t *testing.T) {
	t.Parallel()
	s := pgtest.NewServer(t)
	db := open(t, s.DSN)
	var before, after int
	if err := db.QueryRowContext(t.Context(), `SELECT pg_backend_pid()`).Scan(&before); err != nil {
		t.Fatalf("query before the restart: %v", err)
	}
	s.Restart(t)
	if err := db.QueryRowContext(t.Context(), `SELECT pg_backend_pid()`).Scan(&after); err != nil {
		t.Fatalf("query after the restart: %v", err)
	}
	if after == before {
		t.Errorf("the same backend (pid %d) answered after the restart", after)
	}
	s.Stop(t)
	if err := db.PingContext(t.Context()); err == nil {
		t.Error("the server answers after Stop")
	}
}
